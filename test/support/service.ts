/**
 * The whole service for end-to-end suites, wired as in production: the scripted model server, a real
 * Temporal worker and the real API over HTTP, against a fresh database and a task queue of its own.
 */
import type { DataKeyStore } from '../../platform/crypto/data-keys';
import type { DataConverter } from '@temporalio/common';
import { Pool } from 'pg';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../../platform/config';
import { createUserWithApiKey } from '../../platform/users';
import { startApiServer } from '../../api/server';
import type { Logger } from '../../platform/logger';
import { startScriptedModelServer, type ScriptedModelServerOptions } from '../../dev/scripted-model/server';
import { createTurnWorker } from '../../worker/create-worker';
import { createStepDeps } from '../../worker/dependencies';
import { createTestDatabase, openTestDatabase, type TestDatabase } from './database';
import { readTestEnv } from './test-env';

// Worker lifecycle chatter would bury test output; warnings and errors still show.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed by an earlier suite in this process
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

type ScriptedModel = Awaited<ReturnType<typeof startScriptedModelServer>>;

export interface TestService {
  url: string;
  config: Config;
  database: TestDatabase;
  scripted: ScriptedModel;
  temporal: Client;
  /** The service's data converter (its payload codec encrypts a turn's payloads), for clients a test makes. */
  dataConverter: DataConverter;
  /** The users' data keys (platform/crypto/data-keys.ts). */
  dataKeys: DataKeyStore;
  /** A new user with an API key. */
  createUser(name?: string): Promise<{ userId: string; apiKey: string }>;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestService(
  opts: {
    env?: Partial<Record<keyof Config, string>>;
    scripted?: ScriptedModelServerOptions;
    /** A migrated database the suite owns (not dropped on close); a fresh clone of the template otherwise. */
    databaseUrl?: string;
  } = {},
): Promise<TestService> {
  const env = readTestEnv();
  const database = opts.databaseUrl ? openTestDatabase(opts.databaseUrl) : await createTestDatabase();
  const scripted = await startScriptedModelServer({ port: 0, ...opts.scripted });
  const config = loadConfig({
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: env.temporalAddress,
    TEMPORAL_TASK_QUEUE: `amy-test-${Math.random().toString(36).slice(2, 10)}`,
    ANTHROPIC_BASE_URL: scripted.url,
    PORT: '0',
    LOG_LEVEL: 'error',
    ...opts.env,
  });
  const deps = createStepDeps(config);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  let worker: Worker | null = null;
  let workerRun: Promise<void> | null = null;

  async function startWorker() {
    worker = await createTurnWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps,
      dataConverter: deps.dataConverter,
      workflowBundle: { codePath: env.workflowBundlePath },
    });
    workerRun = worker.run();
  }
  async function stopWorker() {
    if (!worker) return;
    worker.shutdown();
    await workerRun;
    worker = null;
  }

  await startWorker();
  const api = await startApiServer(config, silentLogger);
  const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection: clientConnection, dataConverter: deps.dataConverter });
  let users = 0;

  return {
    url: api.url,
    config,
    database,
    scripted,
    temporal,
    dataConverter: deps.dataConverter,
    dataKeys: deps.dataKeys,
    async createUser(name = `user${++users}_${Math.random().toString(36).slice(2, 6)}`) {
      const { user, apiKey } = await createUserWithApiKey(database.pool, name);
      return { userId: user.id, apiKey };
    },
    startWorker,
    stopWorker,
    async close() {
      await api.close();
      await stopWorker();
      await connection.close();
      await clientConnection.close();
      await deps.close();
      await scripted.close();
      await database.drop();
    },
  };
}

/** The whole service with one demo user (the demo history, 400 days of synthetic data), and a small pool on its database. */
export interface DemoService {
  svc: TestService;
  pool: Pool;
  user: { userId: string; apiKey: string };
  close(): Promise<void>;
}

export async function startDemoService(
  opts: { scripted?: ScriptedModelServerOptions; env?: Partial<Record<keyof Config, string>> } = {},
): Promise<DemoService> {
  const svc = await startTestService(opts);
  const user = await svc.createUser();
  await seedDemoHealthData(svc.database.pool, user.userId);
  const pool = new Pool({ connectionString: svc.database.url, max: 2 });
  return {
    svc,
    pool,
    user,
    async close() {
      await pool.end();
      await svc.close();
    },
  };
}
