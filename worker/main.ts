import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../platform/config';
import { createStepDeps } from './dependencies';
import { ensureRetentionSchedule } from './retention-schedule';
import { runTurnWorker } from './run-worker';

async function run() {
  const config = loadConfig();
  const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    await ensureRetentionSchedule(new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }), {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      replayWindowSeconds: config.AMY_REPLAY_WINDOW_SECONDS,
    });
  } finally {
    await clientConnection.close();
  }
  await runTurnWorker(config, createStepDeps(config));
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
