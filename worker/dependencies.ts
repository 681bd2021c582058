import { Client, Connection } from '@temporalio/client';
import type { Config } from '../platform/config';
import { createEventLog } from '../platform/event-log';
import { createGatesRunner, defaultPythonPath } from '../platform/gates';
import { createLogger, type Logger } from '../platform/logger';
import { createPgPool } from '../platform/pg-pool';
import { createAnthropicClient, createLlm, isScriptedModel } from '../platform/llm';
import { createSandbox } from '../platform/sandbox';
import { costCapDefaults, createCostCapGuard } from '../platform/cost-caps';
import type { StepDeps } from '../activities';
import { createNetworkToolClients } from '../platform/literature/network-tools';
import type { WebhookDeps } from '../activities/webhooks/deliver';
import type { DataConverter } from '@temporalio/common';
import { createDataKeyStore, type DataKeyStore } from '../platform/crypto/data-keys';
import { loadMasterKeyring } from '../platform/crypto/master-key';
import { createDataConverter } from '../platform/temporal/data-converter';
import { createWorkflowOwners, type WorkflowOwners } from '../platform/temporal/workflow-owner';
import { turnWithoutOwnerTerminator } from './turns-without-owner';

/** The composition root's wiring: connections and services for the activities, from configuration. */
export function createStepDeps(
  config: Config,
  logger: Logger = createLogger('worker', config.LOG_LEVEL),
): StepDeps & {
  dataConverter: DataConverter;
  dataKeys: DataKeyStore;
  turnOwners: WorkflowOwners;
  webhooks: WebhookDeps;
  close(): Promise<void>;
} {
  const pool = createPgPool(config.DATABASE_URL, config.AMY_PG_POOL_SIZE, (err) =>
    logger.warn('idle postgres connection lost', { error: err.message }),
  );
  const keyring = loadMasterKeyring();
  // The turns' payloads are encrypted under their users' data keys (platform/temporal/encryption-codec.ts).
  const dataKeys = createDataKeyStore(pool, keyring);
  // One lookup of a turn's owner serves its codec and its activities' check (./turn-run-interceptor.ts).
  const turnOwners = createWorkflowOwners(pool);
  const dataConverter = createDataConverter(pool, dataKeys, {
    owners: turnOwners,
    onTurnWithoutOwner: turnWithoutOwnerTerminator({ temporal: () => temporal, logger }),
  });
  const events = createEventLog(pool);
  const python = config.AMY_PYTHON ?? defaultPythonPath();
  // A result is a handful of numbers; the cap keeps a runaway print loop out of the worker's memory.
  const sandbox = createSandbox({
    python,
    limits: { maxOutputBytes: 256 * 1024 },
    concurrency: config.AMY_SANDBOX_CONCURRENCY,
    bwrap: config.AMY_BWRAP_PATH,
    runDirParent: config.AMY_SANDBOX_DIR,
    warm: config.AMY_SANDBOX_WARM,
  });
  const clock = () => new Date();
  const llm = createLlm({
    anthropic: createAnthropicClient(config),
    pool,
    events,
    costWarnUsd: config.AMY_COST_WARN_USD,
    sendStepInputs: isScriptedModel(config),
    logger,
    modelOverrides: config,
    costCapGuard: createCostCapGuard({ pool, defaults: costCapDefaults(config), clock }),
  });
  const gates = createGatesRunner({ python, processes: config.AMY_GATES_PROCESSES });
  // Connects on first use: only the reconciler of abandoned turns, and the end of turns without owner, ask
  // Temporal anything.
  const temporalConnection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection: temporalConnection, namespace: config.TEMPORAL_NAMESPACE, dataConverter });
  return {
    pool,
    events,
    llm,
    ...(config.AMY_DE_NETWORK_TOOLS ? { networkTools: createNetworkToolClients(pool, config) } : {}),
    models: {
      main: config.AMY_MODEL,
      fast: config.AMY_FAST_MODEL,
      dataScience: config.AMY_DS_MODEL,
      validator: config.AMY_VALIDATOR_MODEL,
    },
    sandbox,
    gates,
    clock,
    temporal,
    dataConverter,
    dataKeys,
    turnOwners,
    webhooks: {
      pool,
      keyring,
      policy: { allowPrivate: config.AMY_WEBHOOKS_ALLOW_PRIVATE },
      concurrency: config.AMY_WEBHOOK_CONCURRENCY,
      clock,
    },
    async close() {
      await Promise.allSettled([pool.end(), gates.close(), sandbox.close(), temporalConnection.close()]);
    },
  };
}
