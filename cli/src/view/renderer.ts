/** What the live view draws on: a terminal's stdout, or anything else stdout is (a pipe, a file). */
import type { Block } from './model';

export interface TerminalOutput {
  write(chunk: string): unknown;
  columns?: number;
  rows?: number;
}

export interface Renderer {
  /** Shows finished blocks (each exactly once). */
  show(blocks: Block[]): void;
  /** Time passed or text arrived: redraw whatever is live. */
  tick(): void;
  /** Removes the live part; what was finished stays. */
  close(): void;
}
