import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../platform/config';
import type { StepDeps } from '../activities';
import { createTurnWorker } from './create-worker';

/**
 * Polls the turn task queue with these dependencies until SIGINT/SIGTERM, then closes them. Announces
 * `worker polling` on stdout once it polls (scripts and tests wait for that line).
 */
export async function runTurnWorker(config: Config, deps: StepDeps & { close(): Promise<void> }): Promise<void> {
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    const worker = await createTurnWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps,
      ...(config.WORKFLOW_BUNDLE_PATH ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } } : {}),
    });
    console.log(
      JSON.stringify({
        level: 'info',
        service: 'worker',
        msg: 'worker polling',
        task_queue: config.TEMPORAL_TASK_QUEUE,
      }),
    );
    // Worker.run resolves after SIGINT/SIGTERM once in-flight tasks have drained.
    await worker.run();
  } finally {
    await deps.close();
    await connection.close();
  }
}
