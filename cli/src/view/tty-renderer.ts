/**
 * The live view on a terminal. Finished blocks are written once and scroll away like any output;
 * only the tail under them (running agents, timers, the text being written) is redrawn, by moving
 * the cursor up over the rows it drew last time and erasing them one by one. The screen is never
 * cleared, so the scrollback keeps everything that was shown.
 */
import { formatBlock } from './blocks';
import type { Block } from './model';
import type { Style } from './style';
import type { Renderer, TerminalOutput } from './renderer';
import { formatTail, type LiveState } from './tail';

/** Cursor up one row, then erase that whole row. */
const ERASE_ROW_ABOVE = '\x1b[1A\x1b[2K';

export class TtyRenderer implements Renderer {
  private tailRows = 0;

  constructor(
    private readonly out: TerminalOutput,
    private readonly live: LiveState,
    private readonly clock: () => number,
    private readonly style: Style,
  ) {}

  show(blocks: Block[]): void {
    // Text deltas change only the tail, which the next tick redraws: no redraw per delta.
    if (blocks.length > 0) this.draw(blocks, true);
  }

  tick(): void {
    this.draw([], true);
  }

  close(): void {
    this.draw([], false);
  }

  /** One write per frame: erase the old tail, append the blocks, draw the new tail. */
  private draw(blocks: Block[], withTail: boolean) {
    let frame = ERASE_ROW_ABOVE.repeat(this.tailRows);
    for (const block of blocks) frame += `${formatBlock(block, this.style)}\n`;
    const tail = withTail
      ? formatTail(this.live, this.clock(), { width: this.out.columns || 80, height: this.out.rows || 24 }, this.style)
      : [];
    for (const row of tail) frame += `${row}\n`;
    this.tailRows = tail.length;
    if (frame !== '') this.out.write(frame);
  }
}
