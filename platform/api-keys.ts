/**
 * API keys as an operator manages them: listed, issued, revoked, rotated; and as the API checks them.
 *
 * - A revoked key is refused from its `revoked_at` on. The check reads the row on every request (no
 *   cache), so a revocation holds from the next request, on every API process.
 * - A rotation issues the new key and revokes the old one in one transaction, either at once or after a
 *   grace period (a `revoked_at` in the future) so that clients can be moved to the new key first.
 * - `last_used_at` is kept to the minute, not to the request: see `checkApiKey`.
 */
import type { Pool } from 'pg';
import { inTransaction } from './pg-pool';
import { API_KEY_PREFIX, hashApiKey, issueApiKey } from './users';

export interface ApiKeySummary {
  id: string;
  /** The key's first characters (`amy_live_` and three more): enough to recognise it, never to use it. */
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  /** When the key stops (or stopped) working; null while it has not been revoked. */
  revoked_at: Date | null;
}

export class UnknownUserError extends Error {
  override name = 'UnknownUserError';
  constructor(readonly userName: string) {
    super(`no user named ${JSON.stringify(userName)}`);
  }
}

export class UnknownApiKeyError extends Error {
  override name = 'UnknownApiKeyError';
  constructor(selector: string) {
    super(`no API key matches ${JSON.stringify(selector)} (give a key id, the key itself, or a unique prefix)`);
  }
}

export class AmbiguousApiKeyError extends Error {
  override name = 'AmbiguousApiKeyError';
  constructor(selector: string, ids: string[]) {
    super(`${ids.length} API keys start with ${JSON.stringify(selector)} (${ids.join(', ')}): give the key id`);
  }
}

export class RevokedApiKeyError extends Error {
  override name = 'RevokedApiKeyError';
  constructor(id: string, at: Date) {
    super(`API key ${id} is revoked from ${at.toISOString()}: issue a new one with key:create`);
  }
}

/**
 * What the API learns from a presented key. A key revoked while its account is being deleted says whose it is:
 * that account may send its deletion again (api/auth.ts), should the first one have failed half-way.
 */
export type ApiKeyCheck =
  | { status: 'valid'; id: string; userId: string }
  | { status: 'revoked'; id: string; accountDeletion: { userId: string } | null }
  | { status: 'unknown' };

/**
 * Looks a presented key up by its hash and, in the same statement, records that it was used. The
 * write happens only when `last_used_at` is more than a minute old: a write per request would turn
 * every read into a write on one hot row per key (WAL, dead tuples, row-lock waits between a
 * client's parallel requests), while an operator deciding whether a key is still in use needs
 * minutes, not milliseconds. Doing it in the lookup's own statement costs no extra round trip and
 * cannot fail apart from the lookup.
 */
export async function checkApiKey(pool: Pick<Pool, 'query'>, key: string): Promise<ApiKeyCheck> {
  if (!key.startsWith(API_KEY_PREFIX)) return { status: 'unknown' };
  const { rows } = await pool.query<{ id: string; user_id: string; revoked: boolean; account_deleting: boolean }>(
    `WITH presented AS (
       SELECT k.id, k.user_id, k.last_used_at, k.revoked_at IS NOT NULL AND k.revoked_at <= now() AS revoked,
              u.deleting_since IS NOT NULL AS account_deleting
         FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = $1
     ), touched AS (
       UPDATE api_keys SET last_used_at = now()
         FROM presented
        WHERE api_keys.id = presented.id AND NOT presented.revoked
          AND (presented.last_used_at IS NULL OR presented.last_used_at < now() - interval '1 minute')
     )
     SELECT id, user_id, revoked, account_deleting FROM presented`,
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (!row) return { status: 'unknown' };
  if (!row.revoked) return { status: 'valid', id: row.id, userId: row.user_id };
  return { status: 'revoked', id: row.id, accountDeletion: row.account_deleting ? { userId: row.user_id } : null };
}

async function userIdByName(pool: Pick<Pool, 'query'>, userName: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM users WHERE name = $1', [userName]);
  if (!rows[0]) throw new UnknownUserError(userName);
  return rows[0].id;
}

const SUMMARY_COLUMNS = 'id, user_id, prefix, created_at, last_used_at, revoked_at';

/** The user's keys, oldest first, revoked ones included. */
export async function listApiKeys(pool: Pool, userName: string): Promise<ApiKeySummary[]> {
  const userId = await userIdByName(pool, userName);
  const { rows } = await pool.query<ApiKeySummary>(
    'SELECT id, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE user_id = $1 ORDER BY created_at, id',
    [userId],
  );
  return rows;
}

/** Another key for the user; returns the key, which is not stored anywhere. */
export async function createApiKey(pool: Pool, userName: string): Promise<{ apiKey: string; userId: string }> {
  const userId = await userIdByName(pool, userName);
  return { apiKey: await issueApiKey(pool, userId), userId };
}

type StoredKey = ApiKeySummary & { user_id: string };

/**
 * The one key an operator means: its id (`key_…`), the key itself (e.g. a leaked one, found by its hash),
 * or a display prefix that only one key has.
 */
async function findApiKey(pool: Pick<Pool, 'query'>, selector: string, lock = false): Promise<StoredKey> {
  const forUpdate = lock ? ' FOR UPDATE' : '';
  const isWholeKey = selector.startsWith(API_KEY_PREFIX) && selector.length > API_KEY_PREFIX.length + 3;
  const { rows } = selector.startsWith('key_')
    ? await pool.query<StoredKey>(`SELECT ${SUMMARY_COLUMNS} FROM api_keys WHERE id = $1${forUpdate}`, [selector])
    : isWholeKey
      ? await pool.query<StoredKey>(`SELECT ${SUMMARY_COLUMNS} FROM api_keys WHERE key_hash = $1${forUpdate}`, [
          hashApiKey(selector),
        ])
      : await pool.query<StoredKey>(
          `SELECT ${SUMMARY_COLUMNS} FROM api_keys WHERE prefix = $1 ORDER BY created_at${forUpdate}`,
          [selector],
        );
  if (rows.length === 0) throw new UnknownApiKeyError(selector);
  if (rows.length > 1)
    throw new AmbiguousApiKeyError(
      selector,
      rows.map((row) => row.id),
    );
  return rows[0];
}

/**
 * Revokes the key now (or keeps an earlier revocation). Returns the key as it is afterwards; revoking a
 * revoked key changes nothing, and a key in its rotation grace period is revoked at once.
 */
export async function revokeApiKey(pool: Pool, selector: string): Promise<ApiKeySummary> {
  const key = await findApiKey(pool, selector);
  const { rows } = await pool.query<ApiKeySummary>(
    `UPDATE api_keys SET revoked_at = LEAST(COALESCE(revoked_at, 'infinity'), now())
      WHERE id = $1 RETURNING id, prefix, created_at, last_used_at, revoked_at`,
    [key.id],
  );
  return rows[0];
}

/**
 * A new key for the same user, and the old one revoked after `graceSeconds` (0: at once), in one
 * transaction: the old key never stops working without the new one existing. A revoked key (or one
 * already in a grace period) cannot be rotated again.
 */
export async function rotateApiKey(
  pool: Pool,
  selector: string,
  graceSeconds = 0,
): Promise<{ apiKey: string; old: ApiKeySummary }> {
  return inTransaction(pool, async (client) => {
    const key = await findApiKey(client, selector, true);
    if (key.revoked_at) throw new RevokedApiKeyError(key.id, key.revoked_at);
    const apiKey = await issueApiKey(client, key.user_id);
    const { rows } = await client.query<ApiKeySummary>(
      `UPDATE api_keys SET revoked_at = now() + make_interval(secs => $2)
        WHERE id = $1 RETURNING id, prefix, created_at, last_used_at, revoked_at`,
      [key.id, graceSeconds],
    );
    return { apiKey, old: rows[0] };
  });
}
