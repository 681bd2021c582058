/**
 * The API as a process of its own (`node --import tsx api/main.ts`, as `npm start` runs it), so its
 * memory can be read from /proc without the benchmark's client, workers and servers mixed in.
 */
import fs from 'node:fs';
import { httpOk, launch, stopEach, type LaunchedProcess } from '../stack/child-process';
import { freePort } from '../stack/ports';

export interface ApiProcess {
  url: string;
  pid: number;
  /** A field of /proc/<pid>/status in kB, e.g. VmRSS (resident now) or VmHWM (resident peak). */
  memoryKb(field: 'VmRSS' | 'VmHWM'): number;
  /** The soft open-files limit the process runs with (inherited from this one). */
  openFilesLimit(): number;
  stop(): Promise<void>;
}

/** Every API process still running, so an interrupted benchmark can stop them before it exits. */
const running = new Set<LaunchedProcess>();

/** The API as `npm run build` compiles it and the images run it (Dockerfile: `node dist/api/main.js`). */
const COMPILED_API = 'dist/api/main.js';

export async function stopApiProcesses(): Promise<void> {
  await stopEach(running);
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

/** `env` is added to this process's environment (TEMPORAL_TASK_QUEUE, limits…); PORT and HOST are set here. */
export async function startApiProcess(
  env: NodeJS.ProcessEnv & { DATABASE_URL: string; TEMPORAL_ADDRESS: string },
  opts: {
    /** Run `npm run build`'s dist/api/main.js with plain node, as the images do, instead of api/main.ts under tsx. */
    compiled?: boolean;
  } = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = await launch({
    name: 'the API process',
    ...(opts.compiled ? { script: COMPILED_API } : { entry: 'api/main.ts' }),
    // LOAD_API_NODE_ARGS profiles the API alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof-api`.
    nodeArgs: (process.env.LOAD_API_NODE_ARGS ?? '').split(' ').filter(Boolean),
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'error' },
    echo: 'all',
    ready: httpOk(`${url}/healthz`),
    timeoutMs: 60_000,
    track: running,
  });
  return {
    url,
    pid: api.pid,
    memoryKb: (field) => readProcStatusKb(api.pid, field),
    openFilesLimit: () => readOpenFilesLimit(api.pid),
    stop: api.stop,
  };
}
