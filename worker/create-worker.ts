import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type StepDeps } from '../activities';
import { turnRunInterceptors } from './turn-run-interceptor';
import { upstreamFailureInterceptors } from './upstream-failure-interceptor';

export const workflowsPath = require.resolve('../workflows');

/** For bundling workflow code where webpack's progress would bury the output (tests, benchmarks). */
export const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (msg: string) => console.warn(msg),
  error: (msg: string) => console.error(msg),
  log: () => undefined,
};

/**
 * A worker polling the turn task queue. Pass a prebuilt `workflowBundle` (bundleWorkflowCode) to
 * skip bundling at start-up, as tests and benchmarks do.
 */
export async function createTurnWorker(opts: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: StepDeps;
  workflowBundle?: WorkerOptions['workflowBundle'];
}): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: createActivities(opts.deps),
    interceptors: { activity: [turnRunInterceptors(opts.deps), upstreamFailureInterceptors] },
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath }),
  });
}
