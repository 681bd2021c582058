/**
 * How much one worker process takes on at once (docs/operations.md#worker-capacity). A turn spends
 * nearly all its life waiting on the model, inside an activity, so a worker's activity slots, not its
 * CPU, decide how many turns it holds in flight: with the SDK's default of 100, the 101st turn's model
 * call waits for a slot (its activity task sits in Temporal's queue) however idle the process is. The
 * service therefore raises that one default; CPU-bound work has bounds of its own (AMY_SANDBOX_CONCURRENCY,
 * AMY_GATES_PROCESSES). The others stay the SDK's unless set: workflow tasks are short and run on one
 * thread, and the sticky cache (maxCachedWorkflows) is sized from the heap, about 600 workflows per GiB
 * above 200 MiB, which must stay above the turns in flight or evicted turns are replayed from their
 * history on every step.
 */
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../platform/config';

export type WorkerTuning = Pick<
  WorkerOptions,
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentLocalActivityExecutions'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxCachedWorkflows'
  | 'activityTaskPollerBehavior'
  | 'workflowTaskPollerBehavior'
>;

export function workerTuning(
  config: Pick<
    Config,
    | 'AMY_WORKER_MAX_ACTIVITIES'
    | 'AMY_WORKER_MAX_LOCAL_ACTIVITIES'
    | 'AMY_WORKER_MAX_WORKFLOW_TASKS'
    | 'AMY_WORKER_MAX_CACHED_WORKFLOWS'
    | 'AMY_WORKER_ACTIVITY_POLLERS'
    | 'AMY_WORKER_WORKFLOW_POLLERS'
  >,
): WorkerTuning {
  const pollers = (maximum: number | undefined) =>
    maximum === undefined ? undefined : { type: 'simple-maximum' as const, maximum };
  const tuning: WorkerTuning = {
    maxConcurrentActivityTaskExecutions: config.AMY_WORKER_MAX_ACTIVITIES,
    maxConcurrentLocalActivityExecutions: config.AMY_WORKER_MAX_LOCAL_ACTIVITIES,
    maxConcurrentWorkflowTaskExecutions: config.AMY_WORKER_MAX_WORKFLOW_TASKS,
    maxCachedWorkflows: config.AMY_WORKER_MAX_CACHED_WORKFLOWS,
    activityTaskPollerBehavior: pollers(config.AMY_WORKER_ACTIVITY_POLLERS),
    workflowTaskPollerBehavior: pollers(config.AMY_WORKER_WORKFLOW_POLLERS),
  };
  // Unset ones are left out, so the SDK's defaults apply to them.
  return Object.fromEntries(Object.entries(tuning).filter(([, value]) => value !== undefined)) as WorkerTuning;
}
