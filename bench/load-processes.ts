/**
 * The service's roles as child processes for `npm run load`, each as `npm start` runs it
 * (`node --import tsx <role>/main.ts`), so that the load generator, the API, the workers and the model
 * each have an event loop of their own and their memory and CPU can be read from /proc one by one.
 * The API uses bench/api-process.ts; this adds the workers and the timed scripted model.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { readProcStatusKb } from './api-process';

/** One model request as the scripted model served it (bench/model-process.ts). */
export interface ModelCallTiming {
  requestId: string;
  /** Start in the model process's clock (ms): only compared with other calls' starts. */
  startMs: number;
  durationMs: number;
}

export const MODEL_TIMINGS_PATH = '/_bench/model-timings';

export interface RoleProcess {
  pid: number;
  memoryKb(field: 'VmRSS' | 'VmHWM'): number;
  stop(): Promise<void>;
}

const root = path.resolve(__dirname, '..');
const running = new Set<() => Promise<void>>();

/** Stops every role process still running, e.g. when a signal interrupts the run. */
export async function stopRoleProcesses(): Promise<void> {
  await Promise.all([...running].map((stop) => stop()));
}

/**
 * Spawns `entry` and resolves once a stdout line satisfies `ready` (its value is returned with the
 * process). Later stdout is drained so a chatty child never blocks on a full pipe.
 */
async function spawnRole<T>(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  ready: (line: string) => T | undefined,
  nodeArgs: string[] = [],
  timeoutMs = 120_000,
): Promise<{ child: ChildProcess; value: T; role: RoleProcess }> {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  // An entry set to undefined is removed, not passed on as the string "undefined".
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(root, entry)], {
    cwd: root,
    env: merged,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    running.delete(stop);
    if (hasExited()) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  };
  running.add(stop);
  try {
    const value = await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} was not ready within ${timeoutMs} ms`)), timeoutMs);
      const lines = readline.createInterface({ input: child.stdout! });
      let found = false;
      lines.on('line', (line) => {
        if (found) return;
        const value = ready(line);
        if (value === undefined) return;
        found = true;
        clearTimeout(timer);
        resolve(value);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${name} exited during start-up (${child.exitCode ?? child.signalCode})`));
      });
    });
    const pid = child.pid!;
    return { child, value, role: { pid, memoryKb: (field) => readProcStatusKb(pid, field), stop } };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface ModelProcess extends RoleProcess {
  url: string;
  /** Every request served so far. */
  timings(): Promise<ModelCallTiming[]>;
}

export async function startModelProcess(chunkDelayMs: number): Promise<ModelProcess> {
  const { value: url, role } = await spawnRole(
    'the scripted model',
    'bench/model-process.ts',
    { LOAD_MODEL_CHUNK_DELAY_MS: String(chunkDelayMs) },
    (line) => {
      try {
        return (JSON.parse(line) as { url?: string }).url;
      } catch {
        return undefined;
      }
    },
  );
  return {
    ...role,
    url,
    async timings() {
      const res = await fetch(`${url}${MODEL_TIMINGS_PATH}`);
      if (!res.ok) throw new Error(`model timings: HTTP ${res.status}`);
      return (await res.json()) as ModelCallTiming[];
    },
  };
}

/** `worker/main.ts` as `npm run worker` runs it; ready when it logs that it polls. */
export async function startWorkerProcess(env: {
  DATABASE_URL: string;
  TEMPORAL_ADDRESS: string;
  TEMPORAL_TASK_QUEUE: string;
  ANTHROPIC_BASE_URL: string;
  WORKFLOW_BUNDLE_PATH: string;
}): Promise<RoleProcess> {
  // ANTHROPIC_API_KEY would send the load to the real API instead of the scripted model.
  const { role } = await spawnRole(
    'a worker',
    'worker/main.ts',
    { ...env, ANTHROPIC_API_KEY: undefined, LOG_LEVEL: 'error' },
    (line) => (line.includes('worker polling') ? true : undefined),
    // LOAD_WORKER_NODE_ARGS profiles the workers alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
    (process.env.LOAD_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  );
  return role;
}
