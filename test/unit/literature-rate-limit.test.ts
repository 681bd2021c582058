/**
 * platform/literature/rate-limit.ts: requests to a host are spaced by its interval, NCBI's limits give the
 * intervals, a backlog longer than the caller will wait fails at once, and the Postgres limiter's statement
 * has the shape that makes it atomic (the statement itself runs against Postgres in the services suites).
 */
import {
  createMemoryRateLimiter,
  createPgRateLimiter,
  ncbiRequestIntervalMs,
  RateLimitBacklogError,
  RESERVE_RATE_SLOT_SQL,
} from '../../platform/literature/rate-limit';

function fakeClock() {
  let now = 0;
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: (ms: number) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
    slept,
  };
}

test("NCBI's limits: 3 a second without a key, 10 with one, never exceeded by rounding", () => {
  expect(ncbiRequestIntervalMs(false)).toBe(334);
  expect(ncbiRequestIntervalMs(true)).toBe(100);
  expect(1000 / ncbiRequestIntervalMs(false)).toBeLessThanOrEqual(3);
});

test('concurrent requests to one host get successive slots one interval apart; other hosts are not held up', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now, sleep: () => Promise.resolve() });
  const waits: number[] = [];
  const sleepRecorder = createMemoryRateLimiter({
    now: clock.now,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  await Promise.all([0, 1, 2, 3].map(() => sleepRecorder.acquire('eutils', { intervalMs: 334, maxWaitMs: 5000 })));
  expect(waits).toEqual([334, 668, 1002]);
  await sleepRecorder.acquire('datacommons', { intervalMs: 100, maxWaitMs: 5000 });
  expect(waits).toHaveLength(3);
  await expect(limiter.acquire('x', { intervalMs: 0, maxWaitMs: 1 })).rejects.toThrow(RangeError);
});

test('a request after the interval has passed goes at once', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter(clock);
  await limiter.acquire('eutils', { intervalMs: 100, maxWaitMs: 1000 });
  await limiter.acquire('eutils', { intervalMs: 100, maxWaitMs: 1000 });
  expect(clock.slept).toEqual([100]);
  await clock.sleep(500);
  await limiter.acquire('eutils', { intervalMs: 100, maxWaitMs: 1000 });
  expect(clock.slept).toEqual([100, 500]);
});

test('a slot further away than the caller will wait fails at once with the wait', async () => {
  const clock = fakeClock();
  const limiter = createMemoryRateLimiter({ now: clock.now, sleep: () => Promise.resolve() });
  for (let i = 0; i < 3; i++) await limiter.acquire('eutils', { intervalMs: 400, maxWaitMs: 1000 });
  const error = await limiter.acquire('eutils', { intervalMs: 400, maxWaitMs: 1000 }).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(RateLimitBacklogError);
  expect((error as RateLimitBacklogError).waitMs).toBe(1200);
});

test('the Postgres limiter reserves a slot in one upsert on the host row and waits what it returns', async () => {
  const query = jest.fn().mockResolvedValue({ rows: [{ wait_ms: 250 }] });
  const slept: number[] = [];
  const limiter = createPgRateLimiter({ query } as never, (ms) => {
    slept.push(ms);
    return Promise.resolve();
  });
  await limiter.acquire('eutils.ncbi.nlm.nih.gov', { intervalMs: 333.4, maxWaitMs: 1000 });
  expect(query).toHaveBeenCalledWith(RESERVE_RATE_SLOT_SQL, ['eutils.ncbi.nlm.nih.gov', 334]);
  expect(slept).toEqual([250]);

  const sql = RESERVE_RATE_SLOT_SQL.replace(/\s+/g, ' ');
  expect(sql).toContain('INSERT INTO tool_rate_slots (host, next_at)');
  expect(sql).toContain('ON CONFLICT (host) DO UPDATE');
  // The next slot is one interval after the later of the reserved slot and now: no two callers share one.
  expect(sql).toContain(
    "SET next_at = GREATEST(tool_rate_slots.next_at + $2::int * interval '1 millisecond', EXCLUDED.next_at)",
  );
  expect(sql).toContain('RETURNING next_at');
  // One reading of Postgres's clock, the one every worker shares.
  expect(sql.match(/clock_timestamp\(\)/g)).toHaveLength(1);
  expect(sql).not.toMatch(/\bnow\(\)/);
});
