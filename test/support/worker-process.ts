import type { ChildProcess } from 'node:child_process';
import { launch, lineIncludes, stopChild, type LaunchOptions } from '../../dev/stack/child-process';
import type { Config } from '../../platform/config';
import { COMPILED_WORKER } from './compiled-roles';
import { readTestEnv } from './test-env';

/**
 * The compiled worker (`npm run worker:prod`: `node dist/worker/main.js`, ./compiled-roles.ts) as a real
 * child process, so a test can SIGKILL it mid-turn. `script` runs another worker entry point instead, a
 * TypeScript one of the tests' own, through tsx (one that prints `worker polling` once it polls). `env`
 * adds to its environment (e.g. `TZ`); the config's variables win. `onLine` sees every line it writes.
 * `workflowBundlePath` runs other workflow code than the run's own bundle (another release's).
 */
export async function spawnWorkerProcess(
  config: Config,
  opts: {
    script?: string;
    env?: Record<string, string>;
    onLine?: LaunchOptions<true>['onLine'];
    workflowBundlePath?: string;
  } = {},
): Promise<ChildProcess> {
  const worker = await launch({
    name: 'the worker',
    ...(opts.script ? { entry: opts.script } : { script: COMPILED_WORKER }),
    env: {
      ...opts.env,
      DATABASE_URL: config.DATABASE_URL,
      TEMPORAL_ADDRESS: config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      ANTHROPIC_BASE_URL: config.ANTHROPIC_BASE_URL,
      WORKFLOW_BUNDLE_PATH: opts.workflowBundlePath ?? readTestEnv().workflowBundlePath,
    },
    ready: lineIncludes('worker polling'),
    onLine: opts.onLine,
  });
  return worker.child;
}

/** SIGKILL, resolved once the process has exited. */
export function killHard(child: ChildProcess): Promise<void> {
  return stopChild(child, 'SIGKILL');
}
