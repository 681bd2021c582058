/**
 * Network tool results kept for a while, so that the same question asked again (another turn, a retried
 * activity, another worker) costs no request against the outside host's rate limit. Shared by the
 * deployment in `tool_result_cache`.
 *
 * The key is a SHA-256 of the tool and its normalised query, so the table holds no query text; the value
 * is what the outside service published (article titles, public statistics), nothing about the user.
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

export interface ToolResultCache {
  /** The cached value, or undefined when there is none or it has expired. */
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown, ttlMs: number): Promise<void>;
}

/** Case, Unicode form and runs of blanks do not make a different question. */
const normaliseText = (text: string) => text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

function normaliseQuery(value: unknown): unknown {
  if (typeof value === 'string') return normaliseText(value);
  if (Array.isArray(value)) return value.map(normaliseQuery);
  if (value !== null && typeof value === 'object') {
    // Sorted keys: `{ a, b }` and `{ b, a }` are one query.
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, normaliseQuery(v)]),
    );
  }
  return value;
}

/** The cache key of a tool's query: hex SHA-256 of the tool name and the normalised query. */
export function toolCacheKey(tool: string, query: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify([tool, normaliseQuery(query)]))
    .digest('hex');
}

/**
 * An expired row is ignored on read and replaced by the next write of its key; each write also deletes a few
 * expired rows of other keys (oldest first), so the table holds about what is fresh without a job of its own.
 */
export function createPgToolResultCache(pool: Pick<Pool, 'query'>): ToolResultCache {
  return {
    async get(key) {
      const { rows } = await pool.query<{ value: unknown }>(
        'SELECT value FROM tool_result_cache WHERE key = $1 AND expires_at > clock_timestamp()',
        [key],
      );
      return rows[0]?.value;
    },
    async set(key, value, ttlMs) {
      await pool.query(
        `INSERT INTO tool_result_cache (key, value, expires_at)
         VALUES ($1, $2::jsonb, clock_timestamp() + $3::float8 * interval '1 millisecond')
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`,
        [key, JSON.stringify(value), Math.round(ttlMs)],
      );
      await pool.query(
        `DELETE FROM tool_result_cache WHERE key IN (
           SELECT key FROM tool_result_cache WHERE expires_at < clock_timestamp() ORDER BY expires_at LIMIT $1)`,
        [EXPIRED_DELETED_PER_WRITE],
      );
    },
  };
}

/** More than one per write, so expired rows never outgrow the writes that add rows. */
const EXPIRED_DELETED_PER_WRITE = 10;

/** The same in one process's memory, for tests; values are stored as JSON, as Postgres would hold them. */
export function createMemoryToolResultCache(now: () => number = Date.now): ToolResultCache {
  const entries = new Map<string, { json: string; expiresAt: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      return Promise.resolve(entry && entry.expiresAt > now() ? (JSON.parse(entry.json) as unknown) : undefined);
    },
    set(key, value, ttlMs) {
      entries.set(key, { json: JSON.stringify(value), expiresAt: now() + ttlMs });
      return Promise.resolve();
    },
  };
}
