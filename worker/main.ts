import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../activities/services/config';
import { createTurnWorker } from './create-worker';
import { createStepDeps } from './dependencies';
import { ensureRetentionSchedule } from './retention-schedule';

async function run() {
  const config = loadConfig();
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    await ensureRetentionSchedule(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }), {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      replayWindowSeconds: config.AMY_REPLAY_WINDOW_SECONDS,
    });
  } finally {
    await clientConnection.close();
  }
  const deps = createStepDeps(config);
  const worker = await createTurnWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    deps,
    ...(config.WORKFLOW_BUNDLE_PATH ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } } : {}),
  });
  console.log(
    JSON.stringify({ level: 'info', service: 'worker', msg: 'worker polling', task_queue: config.TEMPORAL_TASK_QUEUE }),
  );
  // Worker.run resolves after SIGINT/SIGTERM once in-flight tasks have drained.
  try {
    await worker.run();
  } finally {
    await deps.close();
    await connection.close();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
