import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../platform/config';
import { createStepDeps } from './dependencies';
import { ensureRetentionSchedule } from './retention-schedule';
import { runTurnWorker } from './run-worker';

const WORKER_LOG_LEVELS = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const;

async function run() {
  const config = loadConfig();
  // Before any connection: the runtime's logger is fixed once it exists.
  Runtime.install({ logger: new DefaultLogger(WORKER_LOG_LEVELS[config.LOG_LEVEL]) });
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
