/**
 * Model resolution through the worker's own wiring (platform/config.ts → worker/dependencies.ts → the LLM
 * layer): a step whose role is configured with an alias sends the resolved id to the model, and the
 * ledger records that id and prices the call by it.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { startScriptedModelServer, type ScriptedModelServer } from '../../dev/scripted-model/server';
import { createClassifyVagueness } from '../../activities/steps/classify-vagueness';
import { createRoute } from '../../activities/steps/route';
import { loadConfig } from '../../platform/config';
import { costUsd } from '../../platform/llm/prices';
import { createStepDeps } from '../../worker/dependencies';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';
import { readTestEnv } from '../support/test-env';

let database: TestDatabase;
let scripted: ScriptedModelServer;
beforeAll(async () => {
  database = await createTestDatabase();
  scripted = await startScriptedModelServer();
});
afterAll(async () => {
  await scripted?.close();
  await database?.drop();
});

const messages = [{ role: 'user' as const, content: 'What is a normal resting heart rate?' }];

async function ledgerOf(turnId: string) {
  const { rows } = await database.pool.query<{
    step: string;
    model: string;
    cost_usd: string;
    input_tokens: number;
    output_tokens: number;
  }>(
    'SELECT step, model, cost_usd::text, input_tokens, output_tokens FROM llm_calls WHERE turn_id = $1 ORDER BY created_at',
    [turnId],
  );
  return rows;
}

/** The worker's own step dependencies, from its config over this suite's database and scripted model. */
const stepDepsWith = (env: Record<string, string> = {}) =>
  createStepDeps(
    loadConfig({
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: readTestEnv().temporalAddress,
      ANTHROPIC_BASE_URL: scripted.url,
      LOG_LEVEL: 'error',
      ...env,
    }),
  );

test('an aliased role sends the id its override names, and the ledger records and prices that id', async () => {
  const deps = stepDepsWith({ AMY_FAST_MODEL: 'haiku', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-haiku-4-5-20251001' });
  try {
    const { turnId } = await insertUserAndTurn(database.url);
    scripted.requests.clear();
    const env = new MockActivityEnvironment();
    await env.run(createClassifyVagueness(deps), { turnId, messages });
    await env.run(createRoute(deps), { turnId, messages });

    expect(scripted.requests.entries().map((r) => [r.step, r.model])).toEqual([
      ['classify_vagueness', 'claude-haiku-4-5-20251001'],
      ['route', 'claude-haiku-4-5-20251001'],
    ]);
    const ledger = await ledgerOf(turnId);
    expect(ledger.map((row) => [row.step, row.model])).toEqual([
      ['classify_vagueness', 'claude-haiku-4-5-20251001'],
      ['route', 'claude-haiku-4-5-20251001'],
    ]);
    // Haiku's price, not the most expensive one an unknown name ('haiku') would be billed at.
    for (const row of ledger) {
      expect(row.input_tokens).toBeGreaterThan(0);
      expect(Number(row.cost_usd)).toBe(costUsd('claude-haiku-4-5', row.input_tokens, row.output_tokens));
      expect(Number(row.cost_usd)).toBeLessThan(costUsd('claude-opus-4-7', row.input_tokens, row.output_tokens));
    }
  } finally {
    await deps.close();
  }
});

test('with no override, the default roles resolve to the contract ids', async () => {
  const deps = stepDepsWith();
  try {
    const { turnId } = await insertUserAndTurn(database.url);
    scripted.requests.clear();
    await new MockActivityEnvironment().run(createClassifyVagueness(deps), { turnId, messages });
    expect(deps.models.fast).toBe('sonnet');
    expect(scripted.requests.entries().map((r) => r.model)).toEqual(['claude-sonnet-4-6']);
    expect((await ledgerOf(turnId)).map((row) => row.model)).toEqual(['claude-sonnet-4-6']);
  } finally {
    await deps.close();
  }
});
