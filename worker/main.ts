import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { startTracing } from '../platform/tracing';
import { createStepDeps } from './dependencies';
import { ensureRetentionSchedule } from './retention-schedule';
import { installWorkerRuntime, runTurnWorker } from './run-worker';

async function run() {
  const config = loadConfig();
  const logger = installWorkerRuntime(config);
  const tracing = startTracing({ defaultServiceName: 'amy-worker', logger });
  const deps = createStepDeps(config, logger);
  const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    const client = new Client({
      connection: clientConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      dataConverter: deps.dataConverter,
    });
    await ensureRetentionSchedule(client, {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      replayWindowSeconds: config.AMY_REPLAY_WINDOW_SECONDS,
    });
  } finally {
    await clientConnection.close();
  }
  await runTurnWorker(config, deps, logger);
  // What the last activities traced is still batched.
  await tracing.shutdown();
}

run().catch((err: unknown) => {
  // Before the config is read there is no level to honour; an error is always written.
  createLogger('worker').error('worker failed', { error: err });
  process.exit(1);
});
