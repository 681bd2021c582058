/**
 * The service's roles as child processes for `npm run load` and `npm run bench`'s (g), each as
 * `npm start` runs it (`node --import tsx <role>/main.ts`), so that the load generator, the API, the
 * workers and the model each have an event loop of their own and their memory and CPU can be read from
 * /proc (or their cgroups, proc-cpu.ts) one by one. The API uses dev/bench/api-process.ts; this adds the
 * workers, the timed scripted model and the bare workflow's worker.
 */
import { launch, lineIncludes, stopEach, type LaunchedProcess, type Readiness } from '../stack/child-process';
import { readProcStatusKb } from './api-process';
import type { PacingOverrides } from '../scripted-model/pacing';

/** One model request as the scripted model served it (dev/bench/model-process.ts). */
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

const running = new Set<LaunchedProcess>();

/** Stops every role process still running, e.g. when a signal interrupts the run. */
export async function stopRoleProcesses(): Promise<void> {
  await stopEach(running);
}

/**
 * `entry` as a child process, ready when `ready` says so. Its stderr comes through to ours; its stdout
 * (JSON logs) is read and dropped, so a chatty child never blocks on a full pipe.
 */
async function startRole<T>(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  ready: Readiness<T>,
  nodeArgs: string[] = [],
): Promise<RoleProcess & { ready: T }> {
  const role = await launch({ name, entry, nodeArgs, env, ready, echo: 'stderr', graceMs: 20_000, track: running });
  return { pid: role.pid, memoryKb: (field) => readProcStatusKb(role.pid, field), stop: role.stop, ready: role.ready };
}

export interface ModelProcess extends RoleProcess {
  url: string;
  /** Every request served so far. */
  timings(): Promise<ModelCallTiming[]>;
}

/** `pacing`: realistic pacing with these overrides (dev/scripted-model/pacing.ts); null answers at once. */
export async function startModelProcess(chunkDelayMs: number, pacing: PacingOverrides | null): Promise<ModelProcess> {
  const { ready: url, ...role } = await startRole(
    'the scripted model',
    'dev/bench/model-process.ts',
    {
      LOAD_MODEL_CHUNK_DELAY_MS: String(chunkDelayMs),
      ...(pacing ? { LOAD_MODEL_PACING: JSON.stringify(pacing) } : {}),
    },
    {
      line: (line) => {
        try {
          return (JSON.parse(line) as { url?: string }).url;
        } catch {
          return undefined;
        }
      },
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
  // ANTHROPIC_API_KEY would send the load to the real API instead of the scripted model. The level must
  // let `worker polling` (info) through, or the worker is never seen ready; its stdout is read and dropped.
  return startRole(
    'a worker',
    'worker/main.ts',
    { ...env, ANTHROPIC_API_KEY: undefined, LOG_LEVEL: 'info' },
    lineIncludes('worker polling'),
    // LOAD_WORKER_NODE_ARGS profiles the workers alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
    (process.env.LOAD_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  );
}

/** The bare workflow's worker (dev/bench/bare-worker-process.ts), polling `BARE_TASK_QUEUE`. */
export async function startBareWorkerProcess(env: {
  TEMPORAL_ADDRESS: string;
  BARE_TASK_QUEUE: string;
  BARE_WORKFLOW_BUNDLE_PATH: string;
}): Promise<RoleProcess> {
  return startRole('the bare worker', 'dev/bench/bare-worker-process.ts', env, lineIncludes('bare worker polling'));
}
