/**
 * Bytes → lines for an event stream (WHATWG HTML, "Server-sent events", parsing). A line ends at
 * CRLF, LF or CR, and any of them may be split across chunks, as may a multi-byte UTF-8 character:
 * the decoder keeps the unfinished line, the unfinished character and a trailing CR between chunks.
 * A leading byte order mark is dropped (TextDecoder does that once, at the start of the stream).
 */
export class LineDecoder {
  private readonly text = new TextDecoder('utf-8');
  private partial = '';
  /** The previous chunk ended with CR: an LF starting this one belongs to that line break. */
  private afterCR = false;

  /** The complete lines in this chunk, without their line endings. */
  push(bytes: Uint8Array): string[] {
    return this.split(this.text.decode(bytes, { stream: true }));
  }

  /**
   * The end of the stream. An unterminated last line is dropped along with the event it belonged
   * to: the spec dispatches nothing that was not ended by a blank line, so a connection cut in the
   * middle of an event can never deliver half of it.
   */
  end(): void {
    this.text.decode();
    this.partial = '';
    this.afterCR = false;
  }

  private split(chunk: string): string[] {
    const lines: string[] = [];
    let start = 0;
    if (this.afterCR && chunk.charCodeAt(0) === 10) start = 1;
    this.afterCR = false;
    for (let i = start; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      lines.push(this.partial + chunk.slice(start, i));
      this.partial = '';
      if (c === 13) {
        if (i + 1 === chunk.length) this.afterCR = true;
        else if (chunk.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.partial += chunk.slice(start);
    return lines;
  }
}
