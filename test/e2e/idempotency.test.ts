/**
 * `Idempotency-Key` on POST /v1/turns (Stripe's semantics) over real HTTP, a real worker and Temporal:
 * the same key and body within 24 h give the same turn and start nothing (one row, one workflow run),
 * whatever the concurrency cap says and however many requests race; another body is a 422 that
 * changes nothing; keys are the user's own and expire after 24 h. Blocking replays of a running turn
 * hold at most two connections per key: the others are answered at once.
 */
import { Pool } from 'pg';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { turnSchema } from '../../contracts/turn';
import { discardQueuedTurn } from '../../api/tables/turns';
import { api, expectSchema, thanks, type JsonResponse } from '../support/http';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let pool: Pool;

beforeAll(async () => {
  svc = await startTestService();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await svc?.close();
});

type User = { userId: string; apiKey: string };

const post = (user: User, body: unknown, key?: string) =>
  api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });

const turnsOf = async (user: User) =>
  (await svc.database.db.turn.findMany({ where: { userId: user.userId }, select: { id: true } })).map((t) => t.id);

const replayed = (res: JsonResponse) => res.headers.get('idempotent-replayed');

/** The turn's workflow runs, as Temporal describes it: a second start would have made a second run. */
const runIdOf = async (turnId: string) => (await svc.temporal.workflow.getHandle(turnId).describe()).runId;

const finish = (turnId: string) => svc.temporal.workflow.getHandle(turnId).result();

function expectError(res: JsonResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  const { error } = expectSchema(errorEnvelopeSchema, res.body);
  expect(error.code).toBe(code);
  expect(error.request_id).toBe(res.headers.get('x-request-id'));
  expect(error.docs_url).toContain(code);
  return error;
}

test('the same key and body twice: the same turn, the second answer marked replayed; one row, one workflow run', async () => {
  const user = await svc.createUser();
  const first = await post(user, thanks, 'order-1');
  expect(first.status).toBe(201);
  expect(replayed(first)).toBeNull();
  const turn = expectSchema(turnSchema, first.body);
  const run = await runIdOf(turn.id);

  const again = await post(user, thanks, 'order-1');
  expect(again.status).toBe(201);
  expect(replayed(again)).toBe('true');
  expect(expectSchema(turnSchema, again.body).id).toBe(turn.id);

  await finish(turn.id);
  // After the end too: a replay answers with the turn as it stands now, and still starts nothing.
  const late = await post(user, thanks, 'order-1');
  expect(replayed(late)).toBe('true');
  expect(expectSchema(turnSchema, late.body)).toMatchObject({ id: turn.id, status: 'completed' });
  expect(await turnsOf(user)).toEqual([turn.id]);
  expect(await runIdOf(turn.id)).toBe(run);
});

test('"stream" left out and "stream": true are the same body', async () => {
  const user = await svc.createUser();
  const first = await post(user, thanks, 'defaults');
  const again = await post(user, { ...thanks, stream: true, context: { include_memory: true } }, 'defaults');
  expect(again.status).toBe(201);
  expect(replayed(again)).toBe('true');
  expect(again.body.id).toBe(first.body.id);
  await finish(first.body.id);
});

test('"stream": false: the replay waits for the end like the original and returns the whole Turn (200)', async () => {
  const user = await svc.createUser();
  const blocking = { ...thanks, stream: false };
  const first = await post(user, blocking, 'blocking');
  expect(first.status).toBe(200);
  const turn = expectSchema(turnSchema, first.body);
  expect(turn.status).toBe('completed');

  const again = await post(user, blocking, 'blocking');
  expect(again.status).toBe(200);
  expect(replayed(again)).toBe('true');
  expect(expectSchema(turnSchema, again.body)).toEqual(turn);
  expect(await turnsOf(user)).toEqual([turn.id]);
});

test('the same key with a different body is a 422 idempotency_key_reused that changes nothing', async () => {
  const user = await svc.createUser();
  const first = await post(user, thanks, 'reused');
  const other = { messages: [{ role: 'user', content: 'thank you!' }] };
  for (const body of [other, { ...thanks, stream: false }, { ...thanks, context: { include_memory: false } }]) {
    expectError(await post(user, body, 'reused'), 422, 'idempotency_key_reused');
  }
  expect(await turnsOf(user)).toEqual([first.body.id]);
  // The key still belongs to the first request.
  expect((await post(user, thanks, 'reused')).body.id).toBe(first.body.id);
  await finish(first.body.id);
});

describe('a key that is not 1–255 visible ASCII characters is a 400 invalid_field and creates nothing', () => {
  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'order 1'],
    ['a non-ASCII character', 'caf\u00e9'],
  ])('%s', async (_name, key) => {
    const user = await svc.createUser();
    const error = expectError(await post(user, thanks, key), 400, 'invalid_field');
    expect(error.field).toBe('Idempotency-Key');
    expect(await turnsOf(user)).toEqual([]);
  });

  test('255 visible characters are a key', async () => {
    const user = await svc.createUser();
    const key = `${'~'.repeat(250)}!A0z}`;
    const first = await post(user, thanks, key);
    expect(first.status).toBe(201);
    expect((await post(user, thanks, key)).body.id).toBe(first.body.id);
    await finish(first.body.id);
  });
});

test("keys are the user's own: another user's identical key makes a turn of its own", async () => {
  const alice = await svc.createUser();
  const bob = await svc.createUser();
  const a = await post(alice, thanks, 'shared');
  const b = await post(bob, thanks, 'shared');
  expect(b.status).toBe(201);
  expect(replayed(b)).toBeNull();
  expect(b.body.id).not.toBe(a.body.id);
  expect(await turnsOf(bob)).toEqual([b.body.id]);
  await Promise.all([finish(a.body.id), finish(b.body.id)]);
});

test('a replay at the concurrency cap returns the turn, not 429: the request was already admitted', async () => {
  const user = await svc.createUser();
  // No worker: the turns stay queued, so the user stays at the cap of 3.
  await svc.stopWorker();
  const admitted: string[] = [];
  try {
    for (const key of ['cap-1', 'cap-2', 'cap-3']) admitted.push((await post(user, thanks, key)).body.id);
    expectError(await post(user, thanks, 'cap-4'), 429, 'concurrency_limit_exceeded');

    const again = await post(user, thanks, 'cap-2');
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe('true');
    expect(expectSchema(turnSchema, again.body)).toMatchObject({ id: admitted[1], status: 'queued' });
    expect((await turnsOf(user)).sort()).toEqual([...admitted].sort());
  } finally {
    await svc.startWorker();
  }
  await Promise.all(admitted.map(finish));
});

test('10 concurrent POSTs with one key: one turn, one original answer and nine replays', async () => {
  const user = await svc.createUser();
  const responses = await Promise.all(Array.from({ length: 10 }, () => post(user, thanks, 'race')));
  expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
  const ids = new Set(responses.map((r) => r.body.id));
  expect(ids.size).toBe(1);
  expect(responses.filter((r) => replayed(r) === 'true')).toHaveLength(9);
  const [id] = ids;
  expect(await turnsOf(user)).toEqual([id]);
  await finish(id);
});

test('3 concurrent blocking POSTs with one key: each waits for the one turn and returns it completed', async () => {
  const user = await svc.createUser();
  const responses = await Promise.all(
    Array.from({ length: 3 }, () => post(user, { ...thanks, stream: false }, 'blocking-race')),
  );
  expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
  const turns = responses.map((r) => expectSchema(turnSchema, r.body));
  expect(new Set(turns.map((t) => t.id)).size).toBe(1);
  for (const turn of turns) expect(turn.status).toBe('completed');
  expect(await turnsOf(user)).toEqual([turns[0].id]);
});

/** Polls until `done()`; a bound only on waiting for an outcome that comes within a second when the code is right. */
async function until(done: () => boolean | Promise<boolean>, what: string, boundMs = 30_000) {
  const deadline = Date.now() + boundMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const statusOf = async (user: User, turnId: string) =>
  (await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey })).body as {
    status: string;
    progress?: { current_step: string | null };
  };

test('40 concurrent blocking replays of a running turn: all but two answer at once (409 idempotency_key_in_use, Retry-After) while the turn runs; the two wait for its end', async () => {
  const user = await svc.createUser();
  // Held until the test cancels the turn: every answer below that comes while it is still running came at once.
  await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 120_000 });
  const blocking = { ...thanks, stream: false };
  const original = post(user, blocking, 'held');
  let turnId = '';
  await until(async () => ([turnId] = await turnsOf(user)).length === 1, 'the turn was created');
  await until(
    async () => (await statusOf(user, turnId)).progress?.current_step === 'fallback_reply',
    'the turn reached its held step',
  );

  const answered: JsonResponse[] = [];
  const replays = Array.from({ length: 40 }, () =>
    post(user, blocking, 'held').then((res) => {
      answered.push(res);
      return res;
    }),
  );
  await until(() => answered.length >= 38, '38 replays answered while the turn runs');
  expect((await statusOf(user, turnId)).status).toBe('running');
  expect(answered).toHaveLength(38);
  for (const res of answered) {
    const error = expectError(res, 409, 'idempotency_key_in_use');
    expect(error.field).toBe('Idempotency-Key');
    expect(res.headers.get('retry-after')).toBe('5');
    expect(replayed(res)).toBeNull();
  }

  // The two that wait, and the original, answer once the turn ends; nothing else was started.
  await api(svc.url, 'POST', `/v1/turns/${turnId}/cancel`, { key: user.apiKey });
  const waited = (await Promise.all(replays)).filter((res) => res.status !== 409);
  expect(waited.map((res) => [res.status, replayed(res), res.body.id, res.body.status])).toEqual([
    [200, 'true', turnId, 'failed'],
    [200, 'true', turnId, 'failed'],
  ]);
  expect((await original).body).toMatchObject({ id: turnId, status: 'failed', error: { code: 'cancelled' } });
  expect(await turnsOf(user)).toEqual([turnId]);

  // Once the turn has ended, a replay answers at once, however many come.
  const late = await Promise.all(Array.from({ length: 10 }, () => post(user, blocking, 'held')));
  expect(late.map((res) => [res.status, replayed(res)])).toEqual(Array(10).fill([200, 'true']));
}, 120_000);

test('a key older than 24 h is forgotten: the same key and body make a new turn', async () => {
  const user = await svc.createUser();
  const first = await post(user, thanks, 'yesterday');
  await finish(first.body.id);
  await pool.query(
    `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE user_id = $1 AND key = 'yesterday'`,
    [user.userId],
  );

  const again = await post(user, thanks, 'yesterday');
  expect(again.status).toBe(201);
  expect(replayed(again)).toBeNull();
  expect(again.body.id).not.toBe(first.body.id);
  // The key now names the new turn, for another 24 h.
  expect((await post(user, thanks, 'yesterday')).body.id).toBe(again.body.id);
  await finish(again.body.id);
});

test('a turn discarded because its workflow could not start takes its key with it', async () => {
  const user = await svc.createUser();
  await svc.stopWorker();
  let discarded: string;
  try {
    discarded = (await post(user, thanks, 'discarded')).body.id;
    // What the route does when workflow.start fails; here the workflow did start, so it goes too.
    await svc.temporal.workflow.getHandle(discarded).terminate('the test discards its turn');
    await discardQueuedTurn(pool, discarded);
  } finally {
    await svc.startWorker();
  }
  expect(await turnsOf(user)).toEqual([]);
  const again = await post(user, thanks, 'discarded');
  expect(again.status).toBe(201);
  expect(replayed(again)).toBeNull();
  expect(again.body.id).not.toBe(discarded);
  await finish(again.body.id);
});

test('/openapi.json declares the Idempotency-Key header and the 422 on createTurn', async () => {
  const create = (await api(svc.url, 'GET', '/openapi.json')).body.paths['/v1/turns'].post;
  expect(create.parameters).toEqual(
    expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]),
  );
  expect(create.responses['422']).toBeDefined();
});
