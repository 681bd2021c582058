/**
 * The whole service for end-to-end suites, as production runs it: the compiled API and worker
 * (`npm run build`, ./compiled-roles.ts) as child processes started with plain `node`, against a fresh
 * database, a task queue of their own and the scripted model (in this process, so a suite can inject
 * faults and read its requests). The suite inspects what they did through its own connections: a pg
 * pool on the database and a Temporal client with the service's data converter.
 */
import type { DataKeyStore } from '../../platform/crypto/data-keys';
import { createDataKeyStore } from '../../platform/crypto/data-keys';
import { loadMasterKeyring } from '../../platform/crypto/master-key';
import { createDataConverter } from '../../platform/temporal/data-converter';
import type { DataConverter } from '@temporalio/common';
import { Pool } from 'pg';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../../platform/config';
import { createUserWithApiKey } from '../../platform/users';
import type { Logger } from '../../platform/logger';
import { startScriptedModelServer, type ScriptedModelServerOptions } from '../../dev/scripted-model/server';
import { launch, lineIncludes, type LaunchedProcess } from '../../dev/stack/child-process';
import { COMPILED_API, COMPILED_WORKER } from './compiled-roles';
import { createTestDatabase, openTestDatabase, type TestDatabase } from './database';
import { readTestEnv } from './test-env';

// For suites that also run a worker of their own in this process: its lifecycle chatter would bury test
// output; warnings and errors still show.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed by an earlier suite in this process
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

type ScriptedModel = Awaited<ReturnType<typeof startScriptedModelServer>>;

export interface TestService {
  url: string;
  /**
   * The configuration both roles were started with (the same environment, parsed here), but for
   * LOG_LEVEL: `error` here, for pieces a suite builds in this process, and `info` for the roles, whose
   * readiness is a log line.
   */
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
  /** Starts the worker process again after `stopWorker`. */
  startWorker(): Promise<void>;
  /** SIGTERM to the worker process, resolved once it has exited (it drains its tasks first, as in a deploy). */
  stopWorker(): Promise<void>;
  /** SIGKILL to the worker process, as a crash: nothing in flight is finished or handed back. */
  killWorker(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A role of the compiled service as a child process, ready once it logs `ready` (at LOG_LEVEL=info,
 * whatever the suite's level). Its output is kept, not shown; if it dies on its own, its last lines are
 * printed, since the failure a suite then reports (a turn that never ends) would not say why.
 */
async function startRole<T>(
  name: string,
  script: string,
  env: Record<string, string>,
  ready: Parameters<typeof launch<T>>[0]['ready'],
): Promise<LaunchedProcess & { ready: T }> {
  const role = await launch({ name, script, env: { ...env, LOG_LEVEL: 'info' }, ready });
  let stopping = false;
  const stop = role.stop;
  void role.exited.then(({ code, signal }) => {
    if (!stopping)
      console.error(`${name} exited (${signal ?? code}) during the suite; its last output:\n${role.output()}`);
  });
  return {
    ...role,
    stop: () => {
      stopping = true;
      return stop();
    },
    kill: () => {
      stopping = true;
      return role.kill();
    },
  };
}

/** Ready once the API logs `api listening` (a JSON line), with the URL it listens on. */
const apiListening = {
  line: (line: string): string | undefined => {
    if (!line.includes('api listening')) return undefined;
    return (JSON.parse(line) as { url: string }).url;
  },
};

export async function startTestService(
  opts: {
    env?: Partial<Record<keyof Config, string>>;
    scripted?: ScriptedModelServerOptions;
    /** A migrated database the suite owns (not dropped on close); a fresh clone of the template otherwise. */
    databaseUrl?: string;
  } = {},
): Promise<TestService> {
  const testEnv = readTestEnv();
  const database = opts.databaseUrl ? openTestDatabase(opts.databaseUrl) : await createTestDatabase();
  const scripted = await startScriptedModelServer({ port: 0, ...opts.scripted });
  // The roles' whole configuration, besides what every process of the run inherits (AMY_MASTER_KEY).
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: testEnv.temporalAddress,
    TEMPORAL_TASK_QUEUE: `amy-test-${Math.random().toString(36).slice(2, 10)}`,
    ANTHROPIC_BASE_URL: scripted.url,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'error',
    WORKFLOW_BUNDLE_PATH: testEnv.workflowBundlePath,
    // Tests reach a turn's workflow by its id as soon as its POST is answered (getHandle(id)), so the POST
    // waits for the start; the answer before a slow start is tested on its own (e2e/abandoned-turns).
    AMY_TURN_START_WAIT_MS: '60000',
    ...(opts.env as Record<string, string> | undefined),
  };
  const config = loadConfig(env);
  const dataKeys = createDataKeyStore(database.pool, loadMasterKeyring());
  const dataConverter = createDataConverter(database.pool, dataKeys);
  const started: LaunchedProcess[] = [];
  let worker: LaunchedProcess | null = null;

  async function startWorker() {
    worker = await startRole('the compiled worker', COMPILED_WORKER, env, lineIncludes('worker polling'));
  }
  async function stopWorker() {
    await worker?.stop();
    worker = null;
  }
  async function killWorker() {
    await worker?.kill();
    worker = null;
  }

  try {
    await startWorker();
    const api = await startRole('the compiled API', COMPILED_API, env, apiListening);
    started.push(api);
    const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    const temporal = new Client({ connection: clientConnection, dataConverter });
    let users = 0;

    return {
      url: api.ready,
      config,
      database,
      scripted,
      temporal,
      dataConverter,
      dataKeys,
      async createUser(name = `user${++users}_${Math.random().toString(36).slice(2, 6)}`) {
        const { user, apiKey } = await createUserWithApiKey(database.pool, name);
        return { userId: user.id, apiKey };
      },
      startWorker,
      stopWorker,
      killWorker,
      async close() {
        await Promise.all([api.stop(), stopWorker()]);
        await clientConnection.close();
        await scripted.close();
        await database.drop();
      },
    };
  } catch (err) {
    await Promise.all([...started.map((role) => role.stop()), stopWorker()]);
    await scripted.close();
    await database.drop();
    throw err;
  }
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
