/**
 * `amy trace`: every event of a turn written to a file as NDJSON, one line per event, each written
 * through to the file as it arrives, so an interrupted trace keeps everything seen so far. The file
 * is created with the first event: a turn id that names no turn leaves nothing behind.
 */
import fs from 'node:fs';
import type { TurnStreamEvent } from '@amy/sdk';
import { terminalJson, terminalLine } from '../terminal-text';
import { alreadyEnded, type Outcome, type TurnPresenter } from './presenter';

export class TraceFile implements TurnPresenter {
  private fd: number | null = null;
  written = 0;
  firstId: number | null = null;
  lastId: number | null = null;

  constructor(
    readonly path: string,
    private readonly stderr: { write(chunk: string): unknown },
  ) {}

  event(event: TurnStreamEvent): void {
    this.fd ??= fs.openSync(this.path, 'w');
    // The same lines as `--json`, so that `cat` of a trace is as safe as watching it.
    fs.writeSync(this.fd, `${terminalJson(event)}\n`);
    this.written++;
    this.firstId ??= event.id;
    this.lastId = event.id;
  }

  notice(text: string): void {
    this.stderr.write(`${terminalLine(text)}\n`);
  }

  tick(): void {}

  finish(turnId: string, outcome: Outcome): void {
    if (!outcome.sawEnd) this.notice(alreadyEnded(turnId, outcome));
  }

  pause(): void {}

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
