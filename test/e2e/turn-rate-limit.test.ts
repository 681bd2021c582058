/**
 * The per-user limit on how many turns may be created a minute (AMY_MAX_TURNS_PER_MINUTE), over a real
 * API, worker, Temporal and Postgres. With the defaults a burst of ten creations meets the concurrency
 * cap first (3 created, 7 × concurrency_limit_exceeded); past the limit a creation is a 429
 * rate_limited with Retry-After, counted in Postgres, so two API processes on one database share it;
 * a replay of an Idempotency-Key is not a creation and is never refused by it.
 */
import { errorEnvelopeSchema } from '../../contracts/errors';
import { loadConfig } from '../../platform/config';
import { api, expectSchema, thanks, type JsonResponse } from '../support/http';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { freePort } from '../../dev/stack/ports';
import { startTestService, type TestService } from '../support/service';

function expectError(res: JsonResponse, status: number, code: string) {
  expect([res.status, (res.body as { error?: { code?: string } })?.error?.code]).toEqual([status, code]);
  return expectSchema(errorEnvelopeSchema, res.body).error;
}

const create = (svcUrl: string, key: string, headers: Record<string, string> = {}) =>
  api(svcUrl, 'POST', '/v1/turns', { key, body: thanks, headers });

const finish = (svc: TestService, responses: JsonResponse[]) =>
  Promise.all(
    responses
      .filter((r) => r.status === 201)
      .map((r) => svc.temporal.workflow.getHandle((r.body as { id: string }).id).result()),
  );

describe('with the default limit', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.close();
  });

  test('is documented as high enough for a burst of ten to meet the concurrency cap first', () => {
    const defaults = loadConfig({ DATABASE_URL: 'postgresql://localhost/x' });
    expect(defaults.AMY_MAX_TURNS_PER_MINUTE).toBeGreaterThanOrEqual(10);
  });

  test('ten concurrent creations: 3 created, and concurrency_limit_exceeded for the seven over the cap', async () => {
    const user = await svc.createUser();
    // Keep the admitted turns in flight while the others race for a slot.
    await svc.scripted.faults.inject({ kind: 'slow', step: 'classify_vagueness', times: 3, delay_ms: 1500 });
    const responses = await Promise.all(Array.from({ length: 10 }, () => create(svc.url, user.apiKey)));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(3);
    const refused = responses.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(7);
    for (const res of refused) {
      expectError(res, 429, 'concurrency_limit_exceeded');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    await finish(svc, responses);
  });
});

describe('with a low limit', () => {
  const LIMIT = 4;
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { AMY_MAX_TURNS_PER_MINUTE: String(LIMIT) } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  test('one creation more than the limit in a minute is 429 rate_limited with Retry-After, and creates nothing', async () => {
    const user = await svc.createUser();
    const created: JsonResponse[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await create(svc.url, user.apiKey, { 'idempotency-key': `k${i}` });
      expect(res.status).toBe(201);
      created.push(res);
      // Under the concurrency cap, so only the rate limit can refuse the next one.
      await finish(svc, [res]);
    }
    const refused = await create(svc.url, user.apiKey);
    const error = expectError(refused, 429, 'rate_limited');
    expect(error.message).toContain(`${LIMIT} turns`);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const turns = await svc.database.pool.query('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [
      user.userId,
    ]);
    expect(turns.rows[0].n).toBe(LIMIT);

    // A replay is the request already admitted: not refused.
    const replay = await create(svc.url, user.apiKey, { 'idempotency-key': 'k0' });
    expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    // Another user is not limited by this one.
    const other = await svc.createUser();
    const theirs = await create(svc.url, other.apiKey);
    expect(theirs.status).toBe(201);
    await finish(svc, [theirs]);

    // The minute passes (the turns' creation moved back past it): creations are accepted again.
    await svc.database.pool.query(
      "UPDATE turns SET created_at = created_at - interval '61 seconds' WHERE user_id = $1",
      [user.userId],
    );
    const again = await create(svc.url, user.apiKey);
    expect(again.status).toBe(201);
    await finish(svc, [again]);
  });

  test('counted in Postgres: creations through two API processes share one limit', async () => {
    const user = await svc.createUser();
    let second: ApiProcess | null = null;
    try {
      second = await spawnApiProcess(svc.config, await freePort());
      const urls = [svc.url, second.url];
      for (let i = 0; i < LIMIT; i++) {
        const res = await create(urls[i % 2], user.apiKey);
        expect(res.status).toBe(201);
        await finish(svc, [res]);
      }
      for (const url of urls) expectError(await create(url, user.apiKey), 429, 'rate_limited');
    } finally {
      await second?.kill();
    }
  });
});
