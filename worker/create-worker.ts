import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  Worker,
  type Logger as TemporalLogger,
  type WorkerOptions,
} from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createActivities, type StepDeps } from '../activities';
import { createTerraActivities } from '../activities/terra/ingest';
import { createWebhookActivities, type WebhookDeps } from '../activities/webhooks/deliver';
import {
  activityTracingInterceptors,
  WORKFLOW_TRACING_MODULES,
  workflowTracingSinks,
} from '../platform/temporal/tracing';
import { FAILURE_CONVERTER_PATH } from '../platform/temporal/data-converter';
import type { WorkflowOwners } from '../platform/temporal/workflow-owner';
import type { DeployOptions } from './deploy-options';
import type { WorkerTuning } from './worker-tuning';
import { turnRunInterceptors } from './turn-run-interceptor';
import { upstreamFailureInterceptors } from './upstream-failure-interceptor';

export const workflowsPath = require.resolve('../workflows');
/**
 * The workflow interceptors every bundle of workflowsPath is built with (bundleWorkflowCode's
 * `workflowInterceptorModules`): OpenTelemetry's (platform/temporal/tracing.ts). A worker running such
 * a bundle, a replaying one too, registers `workflowTracingSinks()`.
 */
export const workflowInterceptorModules = WORKFLOW_TRACING_MODULES;

/**
 * What every bundle of the service's workflows is built with, whether at a worker's start, by `npm run build`,
 * or by a benchmark: the workflows, their interceptors, and the failure converter the worker's data converter
 * names (a bundle carries its own copy, and both must encode failures alike).
 */
export const turnWorkflowBundleOptions = {
  workflowsPath,
  workflowInterceptorModules,
  failureConverterPath: FAILURE_CONVERTER_PATH,
};

/** For bundling workflow code where webpack's progress would bury the output (tests, benchmarks). */
export const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (msg: string) => console.warn(msg),
  error: (msg: string) => console.error(msg),
  log: () => undefined,
};

/**
 * The bundler's logger on top of `logger`: webpack's statistics (a listing of every module, logged at
 * info once a bundle is built) are dropped; its warnings and errors, which say why bundling failed, pass.
 */
function bundlerLogger(logger: TemporalLogger): TemporalLogger {
  const dropped = () => undefined;
  return {
    log: (level, message, meta) =>
      level === 'WARN' || level === 'ERROR' ? logger.log(level, message, meta) : undefined,
    trace: dropped,
    debug: dropped,
    info: dropped,
    warn: (message, meta) => logger.warn(message, meta),
    error: (message, meta) => logger.error(message, meta),
  };
}

/**
 * Bundles workflows/ as Worker.create would from `workflowsPath`, but through a logger that leaves out
 * webpack's statistics (Worker.create logs them through the Runtime's logger, with no way to turn them off).
 */
async function bundleWorkflows(): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  const logger = Runtime.instance().logger;
  const { code } = await bundleWorkflowCode({ ...turnWorkflowBundleOptions, logger: bundlerLogger(logger) });
  logger.info('workflow bundle built', { size_mb: Number((code.length / 2 ** 20).toFixed(2)) });
  return { code };
}

/**
 * A worker polling the turn task queue. Pass a prebuilt `workflowBundle` (bundleWorkflowCode) to
 * skip bundling at start-up, as tests and benchmarks do.
 */
export async function createTurnWorker(opts: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** With `turnOwners`, the lookup the data converter's codec makes, which the activities' check shares. */
  deps: StepDeps & { turnOwners: WorkflowOwners };
  /** What webhook deliveries need (activities/webhooks/deliver.ts); without it, the worker runs no delivery. */
  webhooks?: WebhookDeps;
  /** The service's data converter (platform/temporal/data-converter.ts): a turn's payloads are encrypted. */
  dataConverter: DataConverter;
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Its version and how long a stop waits (./deploy-options.ts); unversioned and SDK defaults otherwise. */
  deploy?: DeployOptions;
  /** How much it takes on at once (./worker-tuning.ts); the SDK's defaults otherwise. */
  tuning?: WorkerTuning;
}): Promise<Worker> {
  return Worker.create({
    ...opts.tuning,
    ...opts.deploy,
    connection: opts.connection,
    dataConverter: opts.dataConverter,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    // Terra's ingestion needs what a delivery needs (the pool and the master keys), and runs wherever deliveries do.
    activities: {
      ...createActivities(opts.deps),
      ...(opts.webhooks ? { ...createWebhookActivities(opts.webhooks), ...createTerraActivities(opts.webhooks) } : {}),
    },
    // The activity's span first, so that it covers (and records the failure of) the others.
    interceptors: {
      activity: [activityTracingInterceptors, turnRunInterceptors(opts.deps), upstreamFailureInterceptors],
    },
    sinks: workflowTracingSinks(),
    workflowBundle: opts.workflowBundle ?? (await bundleWorkflows()),
  });
}
