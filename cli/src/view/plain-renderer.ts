import { formatBlock } from './blocks';
import type { Block } from './model';
import type { Renderer, TerminalOutput } from './renderer';
import { PLAIN } from './style';

/** Output that is not a terminal: each finished block once, as plain text; nothing is redrawn. */
export class PlainRenderer implements Renderer {
  constructor(private readonly out: TerminalOutput) {}

  show(blocks: Block[]): void {
    for (const block of blocks) this.out.write(`${formatBlock(block, PLAIN)}\n`);
  }

  tick(): void {}

  close(): void {}
}
