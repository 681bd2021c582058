import type { DataConverter } from '@temporalio/common';
import { makeTelemetryFilterString, NativeConnection, Runtime } from '@temporalio/worker';
import type { Config } from '../platform/config';
import { createLogger, temporalLogger, type Logger } from '../platform/logger';
import { startMetricsEndpoint, type MetricsEndpoint } from '../platform/metrics-endpoint';
import { processRegistry } from '../platform/metrics';
import type { StepDeps } from '../activities';
import { createTurnWorker } from './create-worker';
import { shutdownSignal } from '../platform/shutdown-signal';
import { deployOptions } from './deploy-options';
import { temporalMetrics } from './temporal-metrics';
import { workerTuning } from './worker-tuning';
import { startWebhookDispatcher } from './webhook-dispatcher';
import type { WebhookDeps } from '../activities/webhooks/deliver';
import type { WorkflowOwners } from '../platform/temporal/workflow-owner';

const TEMPORAL_LEVELS = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' } as const;

/**
 * The worker's Temporal Runtime, installed once per process before anything creates it (a
 * NativeConnection, a Worker), since its logger and its metrics are fixed then:
 * - our logger is the Runtime's: the SDK's own lines, the Workflow and Activity context loggers' and
 *   Core's (forwarded from the native side) all come out in our format;
 * - with a metrics endpoint (AMY_METRICS_PORT), Core's metrics are buffered for it (temporal-metrics.ts).
 */
export function installWorkerRuntime(config: Pick<Config, 'LOG_LEVEL' | 'AMY_METRICS_PORT'>): Logger {
  const logger = createLogger('worker', config.LOG_LEVEL);
  Runtime.install({
    logger: temporalLogger(logger),
    // The worker stops on signals itself (runTurnWorker): the Runtime's own handling would shut it down
    // on the first signal and leave the next to Node's default, which kills the process mid-drain.
    shutdownSignals: [],
    telemetryOptions: {
      logging: {
        // Core at our level; the native libraries under it only when they fail.
        filter: makeTelemetryFilterString({ core: TEMPORAL_LEVELS[config.LOG_LEVEL], other: 'ERROR' }),
        forward: {},
      },
      ...(config.AMY_METRICS_PORT === undefined ? {} : { metrics: { buffer: temporalMetrics.buffer } }),
    },
  });
  return logger;
}

/** The worker's `/metrics` (the service's metrics, Node's and Temporal's), when AMY_METRICS_PORT asks for one. */
async function startWorkerMetrics(config: Config, logger: Logger): Promise<MetricsEndpoint | null> {
  if (config.AMY_METRICS_PORT === undefined) return null;
  const registry = processRegistry();
  const stopDraining = temporalMetrics.serveFrom(registry);
  const endpoint = await startMetricsEndpoint({
    host: config.AMY_METRICS_HOST,
    port: config.AMY_METRICS_PORT,
    registry,
    logger,
    beforeScrape: () => temporalMetrics.drain(),
  });
  return {
    url: endpoint.url,
    async close() {
      stopDraining();
      await endpoint.close();
    },
  };
}

/**
 * Polls the turn task queue with these dependencies until SIGTERM/SIGINT, then drains (./deploy-options.ts:
 * polling stops, running activities get AMY_SHUTDOWN_GRACE_SECONDS, then are cancelled and retried
 * elsewhere) and closes them. Logs `worker polling` once it polls (scripts and tests wait for that line),
 * `worker draining` when told to stop and `worker stopped` once drained.
 */
export async function runTurnWorker(
  config: Config,
  deps: StepDeps & {
    dataConverter: DataConverter;
    turnOwners: WorkflowOwners;
    webhooks?: WebhookDeps;
    close(): Promise<void>;
  },
  logger: Logger = createLogger('worker', config.LOG_LEVEL),
): Promise<void> {
  const metrics = await startWorkerMetrics(config, logger);
  const stop = shutdownSignal(logger);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    const deploy = deployOptions(config);
    const worker = await createTurnWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps,
      webhooks: deps.webhooks,
      dataConverter: deps.dataConverter,
      ...(config.WORKFLOW_BUNDLE_PATH ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } } : {}),
      deploy,
      tuning: workerTuning(config),
    });
    if (stop.aborted) return;
    const version = deploy.workerDeploymentOptions?.version;
    logger.info('worker polling', {
      task_queue: config.TEMPORAL_TASK_QUEUE,
      ...(version ? { deployment: version.deploymentName, build_id: version.buildId } : { versioned: false }),
    });
    const running = worker.run();
    // The outbox's events become delivery workflows (./webhook-dispatcher.ts); stopped with the polling.
    const dispatcher = deps.webhooks
      ? startWebhookDispatcher({
          pool: deps.pool,
          temporal: deps.temporal,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          schedule: { firstRetrySeconds: config.AMY_WEBHOOK_FIRST_RETRY_SECONDS },
          versioned: deploy.workerDeploymentOptions !== undefined,
          logger,
        })
      : null;
    const drain = () => {
      void dispatcher?.stop();
      logger.info('worker draining', { signal: stop.reason, grace_seconds: config.AMY_SHUTDOWN_GRACE_SECONDS });
      // Not RUNNING: it already stops (a fatal error, or a Runtime installed elsewhere with signal handling).
      if (worker.getState() === 'RUNNING') worker.shutdown();
    };
    stop.addEventListener('abort', drain, { once: true });
    // Resolves once every running activity has finished or been handed back; rejects (the process then
    // exits 1) when they have not HANDBACK_MS after the grace.
    await running.finally(() => dispatcher?.stop());
    logger.info('worker stopped');
  } finally {
    await deps.close();
    await connection.close();
    await metrics?.close();
  }
}
