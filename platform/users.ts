/**
 * Users and their API keys. A key is shown once, at creation; the database keeps only its SHA-256, so a
 * leaked table does not leak working keys. Lookups go through the unique index on the hash: the raw key is
 * never compared character by character, so response time does not reveal how much of a guess was right.
 */
import { createHash, randomBytes } from 'node:crypto';
import { DatabaseError, type Pool } from 'pg';
import { newId } from './ids';
import { inTransaction } from './pg-pool';

export const API_KEY_PREFIX = 'amy_live_';
const API_KEY_RANDOM_CHARS = 32;
/** What a key list can show to tell keys apart: `amy_live_` plus three random characters. */
const DISPLAY_PREFIX_LENGTH = 12;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const USER_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;

export interface UserSummary {
  id: string;
  name: string;
}

export class InvalidUserNameError extends Error {
  override name = 'InvalidUserNameError';
  constructor(readonly userName: string) {
    super(`invalid user name ${JSON.stringify(userName)}: use 1–64 characters from a-z A-Z 0-9 _ . -`);
  }
}

export class UserExistsError extends Error {
  override name = 'UserExistsError';
  constructor(readonly userName: string) {
    super(`a user named ${JSON.stringify(userName)} already exists`);
  }
}

function assertValidUserName(name: string) {
  if (!USER_NAME.test(name)) throw new InvalidUserNameError(name);
}

/** 32 base62 characters (~190 bits); bytes ≥ 248 are skipped so every character is equally likely. */
function generateApiKey(): string {
  let random = '';
  while (random.length < API_KEY_RANDOM_CHARS) {
    for (const byte of randomBytes(API_KEY_RANDOM_CHARS)) {
      if (byte < 248 && random.length < API_KEY_RANDOM_CHARS) random += BASE62[byte % 62];
    }
  }
  return API_KEY_PREFIX + random;
}

export const hashApiKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

function newApiKeyRecord() {
  const apiKey = generateApiKey();
  return {
    apiKey,
    record: { id: newId('apiKey'), keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH) },
  };
}

/** The unique index on `users.name`: a second user of that name. */
const isTakenName = (err: unknown) =>
  err instanceof DatabaseError && err.code === '23505' && err.constraint === 'users_name_key';

async function insertApiKey(
  client: Pick<Pool, 'query'>,
  userId: string,
  record: ReturnType<typeof newApiKeyRecord>['record'],
): Promise<void> {
  await client.query('INSERT INTO api_keys (id, user_id, key_hash, prefix) VALUES ($1, $2, $3, $4)', [
    record.id,
    userId,
    record.keyHash,
    record.prefix,
  ]);
}

/** Creates the user and their first key in one transaction: either both exist afterwards or neither does. */
export async function createUserWithApiKey(pool: Pool, name: string): Promise<{ user: UserSummary; apiKey: string }> {
  assertValidUserName(name);
  const { apiKey, record } = newApiKeyRecord();
  try {
    const user = await inTransaction(pool, async (client) => {
      const { rows } = await client.query<UserSummary>(
        'INSERT INTO users (id, name) VALUES ($1, $2) RETURNING id, name',
        [newId('user'), name],
      );
      await insertApiKey(client, rows[0].id, record);
      return rows[0];
    });
    return { user, apiKey };
  } catch (err) {
    if (isTakenName(err)) throw new UserExistsError(name);
    throw err;
  }
}

/** For the demo: the user named `name`, created (without a key) if missing. Safe to call concurrently. */
export async function ensureUser(pool: Pool, name: string): Promise<UserSummary> {
  assertValidUserName(name);
  // ON CONFLICT DO NOTHING: of concurrent callers, one inserts and the others read its row.
  await pool.query('INSERT INTO users (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [newId('user'), name]);
  const { rows } = await pool.query<UserSummary>('SELECT id, name FROM users WHERE name = $1', [name]);
  return rows[0];
}

/** Mints another key for an existing user; returns the key, which is not stored anywhere. */
export async function issueApiKey(pool: Pick<Pool, 'query'>, userId: string): Promise<string> {
  const { apiKey, record } = newApiKeyRecord();
  await insertApiKey(pool, userId, record);
  return apiKey;
}

/** The user a key that still works belongs to; null for an unknown or revoked key. */
export async function findUserIdByApiKey(pool: Pool, key: string): Promise<string | null> {
  if (!key.startsWith(API_KEY_PREFIX)) return null;
  const { rows } = await pool.query<{ user_id: string }>(
    'SELECT user_id FROM api_keys WHERE key_hash = $1 AND (revoked_at IS NULL OR revoked_at > now())',
    [hashApiKey(key)],
  );
  return rows[0]?.user_id ?? null;
}

export async function findUserByName(pool: Pool, name: string): Promise<UserSummary | null> {
  const { rows } = await pool.query<UserSummary>('SELECT id, name FROM users WHERE name = $1', [name]);
  return rows[0] ?? null;
}

/** Deletes the user and, by cascade, everything that is theirs (keys, turns, memory, health data). */
export async function deleteUser(pool: Pool, userId: string): Promise<void> {
  await pool.query('DELETE FROM users WHERE id = $1', [userId]);
}
