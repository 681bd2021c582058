import type { DataConverter } from '@temporalio/common';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import type { Config } from '../platform/config';
import { createLogger, temporalLogger, type Logger } from '../platform/logger';
import type { StepDeps } from '../activities';
import { createTurnWorker } from './create-worker';

const TEMPORAL_LEVELS = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const;

/**
 * The worker's logger, installed as the Temporal Runtime's: the SDK's own lines, the Workflow and
 * Activity context loggers' and Core's (forwarded from the native side) all come out in our format.
 * Call it before anything creates the Runtime (a NativeConnection, a Worker): its logger is fixed then.
 */
export function installWorkerLogging(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  const logger = createLogger('worker', config.LOG_LEVEL);
  Runtime.install({
    logger: temporalLogger(logger),
    telemetryOptions: {
      logging: {
        // Core at our level; the native libraries under it only when they fail.
        filter: makeTelemetryFilterString({ core: TEMPORAL_LEVELS[config.LOG_LEVEL], other: 'ERROR' }),
        forward: {},
      },
    },
  });
  return logger;
}

/**
 * Polls the turn task queue with these dependencies until SIGINT/SIGTERM, then closes them. Logs
 * `worker polling` once it polls (scripts and tests wait for that line).
 */
export async function runTurnWorker(
  config: Config,
  deps: StepDeps & { dataConverter: DataConverter; close(): Promise<void> },
  logger: Logger = createLogger('worker', config.LOG_LEVEL),
): Promise<void> {
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    const worker = await createTurnWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps,
      dataConverter: deps.dataConverter,
      ...(config.WORKFLOW_BUNDLE_PATH ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } } : {}),
    });
    logger.info('worker polling', { task_queue: config.TEMPORAL_TASK_QUEUE });
    // Worker.run resolves after SIGINT/SIGTERM once in-flight tasks have drained.
    await worker.run();
  } finally {
    await deps.close();
    await connection.close();
  }
}
