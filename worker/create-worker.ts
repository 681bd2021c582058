import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type StepDeps } from '../activities';

export const workflowsPath = require.resolve('../workflows');

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
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath }),
  });
}
