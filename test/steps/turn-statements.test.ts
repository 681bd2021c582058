/**
 * The statements a knowledge turn's bookkeeping sends to Postgres, counted at the pool, against a real
 * Postgres: each one is a round trip for the worker and work for Postgres on every turn (the CPU target's rule:
 * nothing on the per-turn path that can be done once). The counts are of statements, not of time; the behaviour
 * each path had before is checked alongside (the start time a retry keeps, the result's cost and duration,
 * the terminal event and the webhook event, a cap that is reached).
 */
import { Pool, type PoolClient } from 'pg';
import { createQueuedTurn, findTurnForUser, toTurnResource } from '../../api/tables/turns';
import { enterTurnRun } from '../../activities/bookkeeping/turn-attempts';
import { createTurnLifecycle } from '../../activities/bookkeeping/turn-lifecycle';
import { turnSchema } from '../../contracts/turn';
import { CostCapExceededError, createCostCapGuard } from '../../platform/cost-caps';
import { createEventLog } from '../../platform/event-log';
import { newId, ulid } from '../../platform/ids';
import { createTestDatabase, type TestDatabase } from '../support/database';

let t: TestDatabase;
let pool: Pool;
let userId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  pool = new Pool({ connectionString: t.url, max: 4 });
  userId = newId('user');
  await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [userId, 'counted']);
  // An endpoint for turn endings, so that a transition writes its webhook event (the outbox skips types no
  // endpoint subscribes to); never delivered here.
  await pool.query(
    `INSERT INTO webhook_endpoints (id, url, event_types, sealed_secret, secret_master_key_id)
     VALUES ($1, 'https://example.test/hook', ARRAY['turn.completed', 'turn.failed', 'turn.cancelled'], '\\x00', 'mk')`,
    [newId('webhookEndpoint')],
  );
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** `pool` with every statement it sends recorded, on `query` and on the clients of `connect`. */
function countingPool(): { pool: Pool; statements: string[] } {
  const statements: string[] = [];
  const record = (query: unknown) =>
    statements.push(typeof query === 'string' ? query : (query as { text: string }).text);
  const counted = {
    query: (...args: Parameters<Pool['query']>) => {
      record(args[0]);
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    },
    connect: async () => {
      const client = await pool.connect();
      return new Proxy(client, {
        get(target, prop) {
          if (prop === 'query') {
            return (...args: Parameters<PoolClient['query']>) => {
              record(args[0]);
              return (target.query as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
  return { pool: counted as unknown as Pool, statements };
}

async function newTurn(status: 'queued' | 'running', owner = userId): Promise<string> {
  const turnId = newId('turn');
  await pool.query(
    `INSERT INTO turns (id, user_id, status, messages, context, started_at)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $6 THEN now() - interval '2 seconds' END)`,
    [
      turnId,
      owner,
      status,
      JSON.stringify([{ role: 'user', content: 'What is HRV?' }]),
      JSON.stringify({}),
      status === 'running',
    ],
  );
  return turnId;
}

async function chargeCall(turnId: string, costUsd: string) {
  await pool.query(
    `INSERT INTO llm_calls (id, turn_id, step, model, attempt, outcome, input_tokens, output_tokens, cost_usd, duration_ms)
     VALUES ($1, $2, 'synthesis', 'claude-sonnet-4-5', 1, 'success', 10, 10, $3, 5)`,
    [`llm_${ulid()}`, turnId, costUsd],
  );
}

const webhookEventsOf = (turnId: string) =>
  pool.query<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, payload->'data' AS data FROM webhook_events WHERE dedupe_key LIKE '%:' || $1 || ':%' ORDER BY id`,
    [turnId],
  );

const lifecycleOn = (counted: Pool) =>
  createTurnLifecycle({ pool: counted, events: createEventLog(counted), clock: () => new Date() });

test('startTurn: one statement moves the turn to running, one appends turn.started; a retry keeps the start time', async () => {
  const turnId = await newTurn('queued');
  const counted = countingPool();
  await lifecycleOn(counted.pool).startTurn({ turnId });
  expect(counted.statements).toHaveLength(2);

  const row = (await pool.query('SELECT status, started_at FROM turns WHERE id = $1', [turnId])).rows[0];
  expect(row.status).toBe('running');
  // The retry finds the turn running: the event it would append names the first attempt's start (and is deduped).
  await lifecycleOn(countingPool().pool).startTurn({ turnId });
  const events = (
    await pool.query<{ type: string; data: { at: string } }>(
      'SELECT type, data FROM turn_events WHERE turn_id = $1 ORDER BY id',
      [turnId],
    )
  ).rows;
  expect(events).toEqual([
    { type: 'turn.started', data: expect.objectContaining({ at: row.started_at.toISOString() }) },
  ]);
});

test('completeTurn: seven statements, the transaction included; the result, the terminal event and the webhook event as before', async () => {
  const turnId = await newTurn('running');
  await chargeCall(turnId, '0.001234');
  await chargeCall(turnId, '0.000100');
  const counted = countingPool();
  const result = await lifecycleOn(counted.pool).completeTurn({
    turnId,
    answer: 'HRV is the variation between heartbeats.',
    factSheet: [],
    agentsUsed: ['domain_expert'],
    validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
  });
  // The start time and the cost; BEGIN, the lock, the transition, the terminal event, the webhook event, COMMIT.
  expect(counted.statements).toHaveLength(7);

  expect(result.cost_usd).toBe(0.001334);
  expect(result.duration_ms).toBeGreaterThanOrEqual(2000);
  const row = (
    await pool.query('SELECT status, result, user_id, created_at, completed_at FROM turns WHERE id = $1', [turnId])
  ).rows[0];
  expect(row).toMatchObject({ status: 'completed', result });
  const events = (await pool.query('SELECT type FROM turn_events WHERE turn_id = $1 ORDER BY id', [turnId])).rows;
  expect(events).toEqual([{ type: 'turn.completed' }]);
  const webhooks = (await webhookEventsOf(turnId)).rows;
  expect(webhooks).toEqual([
    {
      type: 'turn.completed',
      data: {
        turn_id: turnId,
        user_id: row.user_id,
        status: 'completed',
        error_code: null,
        created_at: row.created_at.toISOString(),
        completed_at: row.completed_at.toISOString(),
      },
    },
  ]);
});

describe("completeTurn: the coach's anchors are result.personal_anchors, apart from the fact sheet", () => {
  const validator = { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 };
  const anchor = {
    claim: 'anchor.sleep_minutes_mean_14d',
    label: 'average nightly sleep',
    value: 401,
    unit: 'min',
    n: 14,
    window: '14 days to 2026-06-14',
  };
  const storedResult = async (turnId: string) => {
    const row = (await findTurnForUser(pool, userId, turnId))!;
    return turnSchema.parse(toTurnResource(row)).result!;
  };

  test('the anchors synthesis returned are stored and read back as they were given', async () => {
    const turnId = await newTurn('running');
    await lifecycleOn(pool).completeTurn({
      turnId,
      answer: 'Your sleep averaged 401 min.',
      factSheet: [],
      personalAnchors: [anchor],
      agentsUsed: ['health_coach'],
      validator,
    });
    expect(await storedResult(turnId)).toMatchObject({ fact_sheet: [], personal_anchors: [anchor] });
  });

  test('a path without synthesis (a direct answer, the Investigator): an empty list', async () => {
    const turnId = await newTurn('running');
    await lifecycleOn(pool).completeTurn({ turnId, answer: 'Hello.', factSheet: [], agentsUsed: [], validator });
    expect((await storedResult(turnId)).personal_anchors).toEqual([]);
  });

  test('a synthesis recorded before the field put the anchors on the fact sheet: they stay there, the field is left out', async () => {
    const turnId = await newTurn('running');
    const { claim, value, unit, n, window } = anchor;
    const legacy = { claim, value, unit, source: 'personal_anchor', n, window };
    await lifecycleOn(pool).completeTurn({
      turnId,
      answer: 'Your sleep averaged 401 min.',
      factSheet: [legacy],
      agentsUsed: ['health_coach'],
      validator,
    });
    const result = await storedResult(turnId);
    expect(result.fact_sheet).toEqual([legacy]);
    expect(result).not.toHaveProperty('personal_anchors');
  });
});

test('failTurn after the completion: the completion stands, nothing of the failure is written, no second webhook event', async () => {
  const turnId = await newTurn('running');
  const lifecycle = lifecycleOn(pool);
  await lifecycle.completeTurn({
    turnId,
    answer: 'done',
    factSheet: [],
    agentsUsed: [],
    validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
  });
  await lifecycle.failTurn({
    turnId,
    error: { code: 'cancelled', message: 'The turn was cancelled.', request_id: '', docs_url: 'x' },
  });
  const row = (await pool.query('SELECT status, error FROM turns WHERE id = $1', [turnId])).rows[0];
  expect(row).toEqual({ status: 'completed', error: null });
  const events = (await pool.query('SELECT type FROM turn_events WHERE turn_id = $1 ORDER BY id', [turnId])).rows;
  expect(events).toEqual([{ type: 'turn.completed' }]);
  const webhooks = await webhookEventsOf(turnId);
  expect(webhooks.rows.map((event) => event.type)).toEqual(['turn.completed']);
});

test("a turn's first run claims it in one statement; the same run is then current, another one is refused", async () => {
  const turnId = await newTurn('running');
  const counted = countingPool();
  const deps = (p: Pool) => ({ pool: p, events: createEventLog(p), clock: () => new Date() });
  await expect(enterTurnRun(deps(counted.pool), turnId, 'run-1')).resolves.toBe('claimed');
  expect(counted.statements).toHaveLength(1);
  await expect(enterTurnRun(deps(pool), turnId, 'run-1')).resolves.toBe('current');
  // A run the running turn has not seen: an operator's reset, the next attempt.
  await expect(enterTurnRun(deps(pool), turnId, 'run-2')).resolves.toBe('reopened');
  await expect(enterTurnRun(deps(pool), turnId, 'run-1')).rejects.toThrow(/superseded/);
  const row = (await pool.query('SELECT run_ids, attempt FROM turns WHERE id = $1', [turnId])).rows[0];
  expect(row).toEqual({ run_ids: ['run-1', 'run-2'], attempt: 2 });
  await expect(enterTurnRun(deps(pool), newId('turn'), 'run-1')).resolves.toBe('unknown_turn');
});

describe('the cost cap guard before each model call', () => {
  const noDefaults = { daily: null, monthly: null };

  test('a user without caps: one statement', async () => {
    const turnId = await newTurn('running');
    const counted = countingPool();
    await createCostCapGuard({ pool: counted.pool, defaults: noDefaults, clock: () => new Date() })(turnId);
    expect(counted.statements).toHaveLength(1);
  });

  test("a user's own cap, reached: the call is refused; the default in the other window still applies", async () => {
    const capped = newId('user');
    await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [capped, 'capped']);
    await pool.query(`INSERT INTO user_cost_caps (user_id, cap_window, limit_usd) VALUES ($1, 'daily', NULL)`, [
      capped,
    ]);
    const turnId = await newTurn('running', capped);
    await chargeCall(turnId, '0.5');
    // Exempt from the daily default by their own row; the monthly default (0.25) is reached.
    const guard = createCostCapGuard({ pool, defaults: { daily: 0.01, monthly: 0.25 }, clock: () => new Date() });
    await expect(guard(turnId)).rejects.toThrow(CostCapExceededError);
    await expect(guard(turnId)).rejects.toThrow(/monthly cost cap of \$0\.25/);
    // Their own daily row exempts them; with a monthly default above the spend, nothing is refused.
    await expect(
      createCostCapGuard({ pool, defaults: { daily: 0.01, monthly: 1 }, clock: () => new Date() })(turnId),
    ).resolves.toBeUndefined();
  });

  test('a turn without a row: not refused here', async () => {
    await expect(
      createCostCapGuard({ pool, defaults: { daily: 0, monthly: 0 }, clock: () => new Date() })(newId('turn')),
    ).resolves.toBeUndefined();
  });
});

describe("a turn's creation (POST /v1/turns)", () => {
  const create = (
    p: Pool,
    owner: string,
    limits: { maxInFlight?: number; maxPerMinute?: number } = {},
    idempotency?: { key: string; requestHash: string },
  ) =>
    createQueuedTurn(p, {
      userId: owner,
      messages: [{ role: 'user', content: 'What is HRV?' }],
      context: {} as never,
      maxInFlight: limits.maxInFlight ?? 10,
      costCaps: { daily: null, monthly: null },
      maxPerMinute: limits.maxPerMinute ?? 100,
      idempotency,
    });

  test('two statements without a cap, in autocommit: the own caps, then create_queued_turn; the turn as read back', async () => {
    const owner = newId('user');
    await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [owner, 'creator']);
    const counted = countingPool();
    const { turn, replayed } = await create(counted.pool, owner);
    expect(replayed).toBe(false);
    expect(counted.statements).toHaveLength(2);
    expect(counted.statements.some((sql) => /^\s*(BEGIN|COMMIT)/i.test(sql))).toBe(false);
    // The created row has the very types and values a read of it gives (dates as Dates, json parsed, nulls).
    expect(turn).toEqual(await findTurnForUser(pool, owner, turn.id));
    expect(toTurnResource(turn)).toEqual(toTurnResource((await findTurnForUser(pool, owner, turn.id))!));
    expect(turn.created_at).toBeInstanceOf(Date);
    expect(turn).toMatchObject({ status: 'queued', attempt: 1, last_event_id: 0, ledger_cost_usd: null });
  });

  test('with an Idempotency-Key: still two statements; its replay reads the turn afresh (three)', async () => {
    const owner = newId('user');
    await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [owner, 'keyed']);
    const idempotency = { key: 'k-1', requestHash: 'h-1' };
    const counted = countingPool();
    const first = await create(counted.pool, owner, {}, idempotency);
    expect(counted.statements).toHaveLength(2);
    const again = countingPool();
    const replay = await create(again.pool, owner, { maxInFlight: 1 }, idempotency);
    expect(again.statements).toHaveLength(3);
    expect(replay).toEqual({ turn: first.turn, replayed: true });
    await expect(create(pool, owner, {}, { key: 'k-1', requestHash: 'h-2' })).rejects.toMatchObject({
      code: 'idempotency_key_reused',
      field: 'Idempotency-Key',
    });
  });

  test("a user's own cap adds the spend's statement", async () => {
    const owner = newId('user');
    await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [owner, 'capped creator']);
    await pool.query(`INSERT INTO user_cost_caps (user_id, cap_window, limit_usd) VALUES ($1, 'daily', 5)`, [owner]);
    const counted = countingPool();
    await create(counted.pool, owner);
    expect(counted.statements).toHaveLength(3);
  });

  test('the checks still refuse, in their order: cost cap, then turns in flight, then the rate', async () => {
    const owner = newId('user');
    await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [owner, 'limited']);
    await create(pool, owner);
    await create(pool, owner);
    await expect(create(pool, owner, { maxInFlight: 2, maxPerMinute: 2 })).rejects.toMatchObject({
      code: 'concurrency_limit_exceeded',
      message: 'You already have 2 turns in flight; at most 2 may be queued or running at once.',
      headers: { 'Retry-After': '5' },
    });
    await expect(create(pool, owner, { maxPerMinute: 2 })).rejects.toMatchObject({
      code: 'rate_limited',
      message: expect.stringMatching(
        /^You created 2 turns in the last 60 s, the most allowed; try again in (59|60) s\.$/,
      ),
      headers: { 'Retry-After': expect.stringMatching(/^(59|60)$/) },
    });
    await pool.query(`INSERT INTO user_cost_caps (user_id, cap_window, limit_usd) VALUES ($1, 'monthly', 0)`, [owner]);
    await expect(create(pool, owner, { maxInFlight: 2, maxPerMinute: 2 })).rejects.toMatchObject({
      code: 'cost_cap_exceeded',
      message: expect.stringMatching(
        /^The monthly cost cap of \$0 is reached: \$0 spent this month \(UTC\); .* No turn was created\.$/,
      ),
    });
    // Nothing was written by the refusals: the two turns only.
    const { rows } = await pool.query('SELECT COUNT(*)::int AS n FROM turns WHERE user_id = $1', [owner]);
    expect(rows[0].n).toBe(2);
  });
});
