/**
 * A file written under a temporary name in its final directory and renamed into place once complete
 * (rename is atomic within a file system), so an interrupted export never leaves a half-written file
 * under the final name. Health data is the user's own: files are readable by the owner only (0600).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class AtomicFile {
  private constructor(
    readonly finalPath: string,
    private readonly tempPath: string,
    private readonly handle: fs.promises.FileHandle,
  ) {}

  static async create(finalPath: string): Promise<AtomicFile> {
    const tempPath = path.join(
      path.dirname(finalPath),
      `.${path.basename(finalPath)}.${randomBytes(4).toString('hex')}.tmp`,
    );
    return new AtomicFile(finalPath, tempPath, await fs.promises.open(tempPath, 'wx', 0o600));
  }

  async write(text: string): Promise<void> {
    await this.handle.write(text);
  }

  /** Flushes the data to disk, then puts the file under its final name (replacing one that is there). */
  async commit(): Promise<void> {
    await this.handle.sync();
    await this.handle.close();
    await fs.promises.rename(this.tempPath, this.finalPath);
  }

  /** Removes the temporary file; synchronous, so a signal handler can call it on the way out. */
  discard(): void {
    this.handle.close().catch(() => {}); // closed already (after a commit), or the process is ending
    fs.rmSync(this.tempPath, { force: true });
  }
}
