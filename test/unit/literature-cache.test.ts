/** platform/literature/cache.ts: keys are hashes of the tool and the normalised query; entries expire. */
import { createMemoryToolResultCache, createPgToolResultCache, toolCacheKey } from '../../platform/literature/cache';

test('the key is a SHA-256 of the tool and the normalised query, holding no query text', () => {
  const key = toolCacheKey('pubmed.search', { term: 'Heart  rate variability ', max: 5 });
  expect(key).toMatch(/^[0-9a-f]{64}$/);
  expect(toolCacheKey('pubmed.search', { max: 5, term: 'heart rate VARIABILITY' })).toBe(key);
  expect(toolCacheKey('pubmed.search', { term: 'heart rate variability', max: 6 })).not.toBe(key);
  expect(toolCacheKey('datacommons.observe', { term: 'heart rate variability', max: 5 })).not.toBe(key);
  expect(toolCacheKey('pubmed.search', { term: 'heart rate', max: 5 })).not.toBe(key);
});

test('an entry is returned until its TTL has passed, as JSON', async () => {
  let now = 0;
  const cache = createMemoryToolResultCache(() => now);
  const value = { articles: [{ pmid: '1', year: null }] };
  await cache.set('k', value, 1000);
  value.articles[0].pmid = 'changed';
  expect(await cache.get('k')).toEqual({ articles: [{ pmid: '1', year: null }] });
  now = 999;
  expect(await cache.get('k')).toBeDefined();
  now = 1000;
  expect(await cache.get('k')).toBeUndefined();
  expect(await cache.get('missing')).toBeUndefined();
});

test('the Postgres cache reads only unexpired rows and upserts with the TTL', async () => {
  const query = jest
    .fn()
    .mockResolvedValueOnce({ rows: [] })
    .mockResolvedValueOnce({ rows: [{ value: { a: 1 } }] });
  const cache = createPgToolResultCache({ query } as never);
  expect(await cache.get('k')).toBeUndefined();
  expect(await cache.get('k')).toEqual({ a: 1 });
  expect(query.mock.calls[0][0]).toMatch(/FROM tool_result_cache WHERE key = \$1 AND expires_at > clock_timestamp\(\)/);
  query.mockResolvedValueOnce({ rows: [] });
  await cache.set('k', { a: 2 }, 60_000);
  const [sql, params] = query.mock.calls[2] as [string, unknown[]];
  expect(sql).toMatch(
    /INSERT INTO tool_result_cache[\s\S]*ON CONFLICT \(key\) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at/,
  );
  expect(params).toEqual(['k', '{"a":2}', 60_000]);
});
