/**
 * For testing one step activity for real: a fresh database, the event log, the scripted model behind
 * the real LLM layer, and `run()` to call the activity inside Temporal's MockActivityEnvironment
 * (so `Context.current()` — attempt, heartbeats, cancellation — works as in a worker).
 */
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Pool } from 'pg';
import type { StepDeps } from '../../activities';
import { createEventLog } from '../../platform/event-log';
import { createGatesRunner, defaultPythonPath } from '../../platform/gates';
import { createAnthropicClient, createLlm } from '../../platform/llm';
import { createSandbox } from '../../platform/sandbox';
import { startScriptedModelServer, type ScriptedModelServerOptions } from '../../dev/scripted-model/server';
import { createTestDatabase, type TestDatabase } from './database';
import { insertUserAndTurn } from './fixtures';
import { readTestEnv } from './test-env';

type ScriptedModel = Awaited<ReturnType<typeof startScriptedModelServer>>;

export interface StepHarness {
  deps: StepDeps;
  database: TestDatabase;
  scripted: ScriptedModel;
  /** A new user and a running turn to charge calls and events to. */
  newTurn(): Promise<string>;
  run<A extends unknown[], R>(activity: (...args: A) => Promise<R>, ...args: A): Promise<R>;
  close(): Promise<void>;
}

export async function startStepHarness(scriptedOptions: ScriptedModelServerOptions = {}): Promise<StepHarness> {
  const database = await createTestDatabase();
  const pool = new Pool({ connectionString: database.url, max: 5 });
  const events = createEventLog(pool);
  const scripted = await startScriptedModelServer(scriptedOptions);
  const llm = createLlm({
    anthropic: createAnthropicClient({ ANTHROPIC_BASE_URL: scripted.url }),
    pool,
    events,
    costWarnUsd: 100,
    sendStepInputs: true,
  });
  const temporalConnection = Connection.lazy({ address: readTestEnv().temporalAddress });
  const deps: StepDeps = {
    pool,
    events,
    llm,
    models: {
      main: 'claude-opus-4-7',
      fast: 'claude-sonnet-4-6',
      dataScience: 'claude-sonnet-4-6',
      validator: 'claude-opus-4-7',
    },
    sandbox: createSandbox({ python: defaultPythonPath() }),
    gates: createGatesRunner({ python: defaultPythonPath() }),
    clock: () => new Date(),
    temporal: new Client({ connection: temporalConnection }),
  };
  return {
    deps,
    database,
    scripted,
    async newTurn() {
      const { turnId } = await insertUserAndTurn(database.url);
      await pool.query(`UPDATE turns SET status = 'running', started_at = now() WHERE id = $1`, [turnId]);
      return turnId;
    },
    run(activity, ...args) {
      return new MockActivityEnvironment().run(activity, ...args);
    },
    async close() {
      await scripted.close();
      await deps.gates.close();
      await temporalConnection.close();
      await pool.end();
      await database.drop();
    },
  };
}
