/**
 * Per-user cost caps (docs/operations.md#cost-caps), on the whole service with the scripted model. The
 * environment's default daily cap is tiny (AMY_USER_DAILY_CAP_USD), so a fresh user's first model call
 * is allowed (nothing spent yet) and reaches it:
 *
 * - the default applies: the running turn stops at its next model call, non-retryably, and fails with
 *   `cost_cap_exceeded` and its cost so far, on the Turn and in `turn.failed`;
 * - a turn that would start over the cap is refused with `429 cost_cap_exceeded` and `Retry-After` to the
 *   end of the UTC day (or month), and nothing is written: no turn, no Idempotency-Key, no model call;
 * - an Idempotency-Key replay of a turn admitted before the cap is answered, cap or not;
 * - `npm run user:caps` sets, shows and clears a user's own caps, which replace the default, and refuses
 *   bad input with a clear error and no change.
 */
import { errorEnvelopeSchema } from '../../contracts/errors';
import { turnSchema } from '../../contracts/turn';
import { runCli } from '../support/cli';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

const DEFAULT_DAILY_CAP = '0.000001';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { AMY_USER_DAILY_CAP_USD: DEFAULT_DAILY_CAP } });
}, 60_000);
afterAll(async () => {
  await svc?.close();
});

const caps = (...args: string[]) =>
  runCli('scripts/user-caps.ts', args, { DATABASE_URL: svc.database.url, AMY_USER_DAILY_CAP_USD: DEFAULT_DAILY_CAP });

const question = { messages: [{ role: 'user', content: 'What is a normal resting heart rate?' }] };

async function newUser() {
  const name = `caps_${Math.random().toString(36).slice(2, 8)}`;
  return { name, ...(await svc.createUser(name)) };
}

async function count(table: 'turns' | 'idempotency_keys', userId: string): Promise<number> {
  const { rows } = await svc.database.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`,
    [userId],
  );
  return rows[0].n;
}

async function ledger(turnId: string) {
  const { rows } = await svc.database.pool.query<{ step: string; cost_usd: string }>(
    'SELECT step, cost_usd::text FROM llm_calls WHERE turn_id = $1 ORDER BY created_at',
    [turnId],
  );
  return rows;
}

async function events(turnId: string) {
  const { rows } = await svc.database.pool.query<{ type: string; data: Record<string, unknown> }>(
    'SELECT type, data FROM turn_events WHERE turn_id = $1 ORDER BY id',
    [turnId],
  );
  return rows;
}

const nextUtcMidnight = (at: Date) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
const nextUtcMonth = (at: Date) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);

/** POST /v1/turns, expected refused by a cost cap; checks Retry-After against the window's end around the request. */
async function expectRefused(key: string, windowEnd: (at: Date) => number, headers: Record<string, string> = {}) {
  const before = new Date();
  const res = await api(svc.url, 'POST', '/v1/turns', { key, body: { ...question, stream: false }, headers });
  const after = new Date();
  expect(res.status).toBe(429);
  const { error } = expectSchema(errorEnvelopeSchema, res.body);
  expect(error.code).toBe('cost_cap_exceeded');
  expect(error.docs_url).toMatch(/#cost_cap_exceeded$/);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((windowEnd(after) - after.getTime()) / 1000));
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil((windowEnd(before) - before.getTime()) / 1000));
  return error;
}

test('a running turn that reaches the default cap fails at its next step with cost_cap_exceeded and its cost', async () => {
  const user = await newUser();
  const res = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...question, stream: false } });
  expect(res.status).toBe(200);
  const turn = expectSchema(turnSchema, res.body);
  expect(turn.status).toBe('failed');
  expect(turn.error?.code).toBe('cost_cap_exceeded');
  expect(turn.error?.docs_url).toMatch(/#cost_cap_exceeded$/);

  // The first call (nothing spent yet) ran; the next one was refused before it was made, and not retried.
  const calls = await ledger(turn.id);
  expect(calls.map((call) => call.step)).toEqual(['classify_vagueness']);
  const cost = Number(calls[0].cost_usd);
  expect(cost).toBeGreaterThan(Number(DEFAULT_DAILY_CAP));
  expect(turn.cost_usd).toBe(cost);
  expect(turn.error?.message).toContain('Step route failed');
  expect(turn.error?.message).toContain(`The daily cost cap of $${DEFAULT_DAILY_CAP} is reached`);
  expect(turn.error?.message).toContain(`The turn stopped after spending $${cost}.`);

  const log = await events(turn.id);
  expect(log.some((event) => event.type === 'step.retry')).toBe(false);
  expect(log.at(-1)).toMatchObject({
    type: 'turn.failed',
    data: { turn_id: turn.id, error: { code: 'cost_cap_exceeded' }, cost_usd: cost },
  });
});

test('a turn that would start over the cap is refused with Retry-After to the window end, and nothing is written', async () => {
  const user = await newUser();
  const first = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...question, stream: false } });
  expect(first.body.error.code).toBe('cost_cap_exceeded');
  const turns = await count('turns', user.userId);
  const modelCalls = svc.scripted.requests.entries().length;

  const error = await expectRefused(user.apiKey, nextUtcMidnight, { 'Idempotency-Key': 'over-the-cap-1' });
  expect(error.message).toMatch(
    /^The daily cost cap of \$0\.000001 is reached: \$[\d.]+ spent today \(UTC\); it resets at \d{4}-\d\d-\d\dT00:00:00\.000Z\. No turn was created\.$/,
  );
  expect(await count('turns', user.userId)).toBe(turns);
  expect(await count('idempotency_keys', user.userId)).toBe(0);
  expect(svc.scripted.requests.entries().length).toBe(modelCalls);
});

test('an Idempotency-Key replay of a turn admitted before the cap is answered, cap or not', async () => {
  const user = await newUser();
  const request = { key: user.apiKey, body: { ...question, stream: false }, headers: { 'Idempotency-Key': 'k-1' } };
  const created = await api(svc.url, 'POST', '/v1/turns', request);
  expect(created.status).toBe(200);
  expect(created.body.error.code).toBe('cost_cap_exceeded');
  // The user is over the cap now, but this request was admitted before: it is answered as it was.
  const replayed = await api(svc.url, 'POST', '/v1/turns', request);
  expect(replayed.status).toBe(200);
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body.id).toBe(created.body.id);
  await expectRefused(user.apiKey, nextUtcMidnight);
});

test("user:caps sets, shows and clears a user's own caps, which replace the default", async () => {
  const user = await newUser();
  const shown = await caps(user.name);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain(`Cost caps of ${user.name} (${user.userId})`);
  expect(shown.stdout).toMatch(/daily +cap \$0\.000001 \(default: AMY_USER_DAILY_CAP_USD here\) +spent \$0 today/);
  expect(shown.stdout).toMatch(/monthly +no cap \(default: AMY_USER_MONTHLY_CAP_USD here\) +spent \$0 this month/);

  // Over the default: refused, until the user's own cap replaces it.
  await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...question, stream: false } });
  await expectRefused(user.apiKey, nextUtcMidnight);
  const set = await caps(user.name, '--daily-usd', '5', '--monthly-usd=50.25');
  expect(set.code).toBe(0);
  expect(set.stdout).toMatch(/daily +cap \$5 \(set for this user\)/);
  expect(set.stdout).toMatch(/monthly +cap \$50\.25 \(set for this user\)/);
  expect(set.stdout).toMatch(/spent \$0\.\d+ today/);
  const allowed = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...question, stream: false } });
  expect(allowed.body.status).toBe('completed');

  // A monthly cap reached: Retry-After runs to the end of the UTC month.
  expect((await caps(user.name, '--monthly-usd', '0')).stdout).toMatch(/monthly +cap \$0 \(set for this user\)/);
  const monthly = await expectRefused(user.apiKey, nextUtcMonth);
  expect(monthly.message).toContain('The monthly cost cap of $0 is reached');

  // `none` exempts the user from a window's cap, default or not.
  const exempt = await caps(user.name, '--daily-usd', 'none', '--monthly-usd', 'none');
  expect(exempt.stdout).toMatch(/daily +no cap \(set for this user\)/);
  const unCapped = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...question, stream: false } });
  expect(unCapped.body.status).toBe('completed');

  // `default` gives one window back to the default; --clear both.
  expect((await caps(user.name, '--monthly-usd', 'default')).stdout).toMatch(/monthly +no cap \(default/);
  const cleared = await caps(user.name, '--clear');
  expect(cleared.code).toBe(0);
  expect(cleared.stdout).toMatch(/daily +cap \$0\.000001 \(default: AMY_USER_DAILY_CAP_USD here\)/);
  const { rows } = await svc.database.pool.query('SELECT 1 FROM user_cost_caps WHERE user_id = $1', [user.userId]);
  expect(rows).toEqual([]);
});

test.each([
  [['--daily-usd', '5'], /^error: usage: npm run user:caps/],
  [['ghost_user', '--daily-usd', '5'], /^error: no user named "ghost_user"/],
  [['{user}', '--daily-usd', '-1'], /^error: --daily-usd "-1": give an amount in USD from 0 to 999999/],
  [['{user}', '--daily-usd', 'ten'], /^error: --daily-usd "ten": give an amount/],
  [['{user}', '--monthly-usd', '1.0000001'], /^error: --monthly-usd "1.0000001": give an amount .* at most 6 decimals/],
  [['{user}', '--monthly-usd', '1e3'], /^error: --monthly-usd "1e3": give an amount/],
  [['{user}', '--daily-usd', '1000000'], /^error: --daily-usd "1000000": give an amount/],
  [['{user}', '--daily-usd'], /^error: --daily-usd needs a value/],
  [['{user}', '--daily-usd', '--monthly-usd', '5'], /^error: --daily-usd needs a value/],
  [['{user}', '--daily-usd', '1', '--daily-usd', '2'], /^error: --daily-usd given twice/],
  [['{user}', '--clear', '--daily-usd', '1'], /^error: --clear sets both caps to the default: give it alone/],
  [['{user}', '--weekly-usd', '1'], /^error: unknown option --weekly-usd/],
])('user:caps %j is refused with a clear error and changes nothing', async (args, message) => {
  const user = await newUser();
  await caps(user.name, '--daily-usd', '7');
  const res = await caps(...args.map((arg) => (arg === '{user}' ? user.name : arg)));
  expect(res.code).toBe(1);
  expect(res.stderr).toMatch(message);
  expect(res.stdout).toBe('');
  const { rows } = await svc.database.pool.query<{ cap_window: string; limit_usd: string }>(
    'SELECT cap_window, limit_usd::text FROM user_cost_caps WHERE user_id = $1',
    [user.userId],
  );
  expect(rows).toEqual([{ cap_window: 'daily', limit_usd: '7.000000' }]);
});

test('user:caps refuses a default it cannot read', async () => {
  const user = await newUser();
  const res = await runCli('scripts/user-caps.ts', [user.name], {
    DATABASE_URL: svc.database.url,
    AMY_USER_MONTHLY_CAP_USD: 'lots',
  });
  expect(res.code).toBe(1);
  expect(res.stderr).toContain('AMY_USER_MONTHLY_CAP_USD');
});
