import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../activities/services/config';
import { createTurnWorker } from './create-worker';
import { createStepDeps } from './dependencies';

async function run() {
  const config = loadConfig();
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
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
