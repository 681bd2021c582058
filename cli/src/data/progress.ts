/**
 * One line of progress on stderr, redrawn in place, for a terminal only: piped or redirected, stderr
 * gets nothing, so scripts and logs see the results and errors alone.
 */
export class Progress {
  private shown = false;

  constructor(private readonly stderr: NodeJS.WriteStream) {}

  show(text: string): void {
    if (!this.stderr.isTTY) return;
    this.stderr.write(`\r${text}\x1b[K`);
    this.shown = true;
  }

  /** Erases the line, so what follows starts on a clean one. */
  clear(): void {
    if (!this.shown) return;
    this.stderr.write('\r\x1b[K');
    this.shown = false;
  }
}
