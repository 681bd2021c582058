/**
 * The API as a process of its own (`node --import tsx api/main.ts`, as `npm start` runs it), so its
 * memory can be read from /proc without the benchmark's client, workers and servers mixed in.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../scripts/local-postgres';

export interface ApiProcess {
  url: string;
  pid: number;
  /** A field of /proc/<pid>/status in kB, e.g. VmRSS (resident now) or VmHWM (resident peak). */
  memoryKb(field: 'VmRSS' | 'VmHWM'): number;
  /** The soft open-files limit the process runs with (inherited from this one). */
  openFilesLimit(): number;
  stop(): Promise<void>;
}

const root = path.resolve(__dirname, '..');
/** Every API process still running, so an interrupted benchmark can stop them before it exits. */
const running = new Set<() => Promise<void>>();

export async function stopApiProcesses(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

export function readProcStatusKb(pid: number | 'self', field: string): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

export function readOpenFilesLimit(pid: number | 'self'): number {
  const limits = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
  const match = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  if (!match) throw new Error(`no open-files limit in /proc/${pid}/limits`);
  return match[1] === 'unlimited' ? Infinity : Number(match[1]);
}

async function waitForHealthy(url: string, exited: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('the API process exited during start-up');
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the API process was not healthy within ${timeoutMs} ms`);
}

export async function startApiProcess(env: { DATABASE_URL: string; TEMPORAL_ADDRESS: string }): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'api', 'main.ts')], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    running.delete(stop);
    if (hasExited()) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  };
  running.add(stop);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(url, hasExited);
  } catch (err) {
    await stop();
    throw err;
  }
  const pid = child.pid!;
  return {
    url,
    pid,
    memoryKb: (field) => readProcStatusKb(pid, field),
    openFilesLimit: () => readOpenFilesLimit(pid),
    stop,
  };
}
