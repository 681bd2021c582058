/**
 * The network tools' shared state on a real Postgres (platform/literature/): the rate limiter's slots serialise
 * concurrent callers of one host across processes (here, several pools standing in for workers), the pace NCBI
 * allows; the result cache returns what is fresh, never what expired, and each write clears expired rows.
 */
import { Pool } from 'pg';
import { createPgToolResultCache } from '../../platform/literature/cache';
import { createPgRateLimiter, ncbiRequestIntervalMs } from '../../platform/literature/rate-limit';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
const pools: Pool[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
  for (let i = 0; i < 3; i++) pools.push(new Pool({ connectionString: database.url, max: 2 }));
});
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await database?.drop();
});

test('three workers asking at once for one host get slots an interval apart, and another host is not held up', async () => {
  const interval = ncbiRequestIntervalMs(false);
  const waits: number[] = [];
  const limiters = pools.map((pool) =>
    createPgRateLimiter(pool, async (ms) => {
      waits.push(ms);
    }),
  );
  await Promise.all(
    limiters.flatMap((limiter) =>
      [1, 2].map(() => limiter.acquire('eutils.test', { intervalMs: interval, maxWaitMs: 10_000 })),
    ),
  );
  // Six requests: the first goes (about) at once, each next one an interval later (give or take the clock).
  const sorted = [...waits].sort((a, b) => a - b);
  expect(sorted.length).toBeGreaterThanOrEqual(5);
  const slots = sorted.length === 6 ? sorted : [0, ...sorted];
  slots.forEach((wait, i) => expect(Math.abs(wait - i * interval)).toBeLessThan(interval / 2));
  // A host's first request goes at once, to the microsecond: ten new hosts, none of them waits at all.
  const other: number[] = [];
  const another = createPgRateLimiter(pools[0], async (ms) => void other.push(ms));
  for (let i = 0; i < 10; i++) await another.acquire(`datacommons-${i}.test`, { intervalMs: 100, maxWaitMs: 10_000 });
  expect(other).toEqual([]);
});

test('a backlog longer than the caller will wait is refused at once', async () => {
  const limiter = createPgRateLimiter(pools[0], async () => undefined);
  await limiter.acquire('slow.test', { intervalMs: 5_000, maxWaitMs: 1_000 });
  await expect(limiter.acquire('slow.test', { intervalMs: 5_000, maxWaitMs: 1_000 })).rejects.toThrow(
    /next request slot is \d+ ms away/,
  );
});

test('the cache returns a fresh value, not an expired one, and a write clears expired rows', async () => {
  const cache = createPgToolResultCache(pools[0]);
  await cache.set('fresh', { articles: [1] }, 60_000);
  await cache.set('stale', { articles: [2] }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await cache.get('fresh')).toEqual({ articles: [1] });
  expect(await cache.get('stale')).toBeUndefined();
  await cache.set('another', { articles: [3] }, 60_000);
  const { rows } = await pools[0].query<{ key: string }>('SELECT key FROM tool_result_cache ORDER BY key');
  expect(rows.map((row) => row.key)).toEqual(['another', 'fresh']);
});
