/**
 * Users' data keys (docs/operations.md#keys): each user has one random AES-256 key, which the payload codec
 * (platform/temporal/encryption-codec.ts) encrypts their turns' Temporal payloads under. The key is stored in
 * `user_data_keys` wrapped by the master key (./master-key.ts): AES-256-GCM, iv | ciphertext | tag, with the
 * key's id and its user's id as additional data, so a wrapped key copied to another row or another user does
 * not unwrap. Destroying a user's row makes every payload encrypted under it unreadable, wherever a copy of
 * it is kept (crypto-shredding): account deletion relies on it.
 *
 * Unwrapped keys are cached in this process for `cacheTtlMs` (60 s by default), since every payload of a turn
 * needs its key. The price, documented: after an account deletion in another process, this one may still
 * encrypt and decrypt with the destroyed key until its cache entry expires. Nothing here logs a key, wrapped
 * or not, and no error message holds one.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { DatabaseError, type Pool } from 'pg';
import { ulid } from '../ids';
import { inTransaction } from '../pg-pool';
import type { MasterKey, MasterKeyring } from './master-key';

export interface DataKey {
  /** `dk_<ULID>`: what an encrypted payload's metadata names. */
  keyId: string;
  userId: string;
  key: Buffer;
}

/** The data key was destroyed (its user deleted) or never existed: what was encrypted under it stays sealed. */
export class DataKeyUnavailableError extends Error {
  override name = 'DataKeyUnavailableError';
}

/**
 * A stored data key this process cannot unwrap: its master key is not in the ring (a rotation this process
 * has not been restarted for), or the wrapped key does not authenticate under it (another key with that id,
 * or an altered row). An operator's problem, not the user's: nothing was destroyed.
 */
export class DataKeyUnwrapError extends Error {
  override name = 'DataKeyUnwrapError';
}

export interface DataKeyStore {
  /** The user's data key, created on first use; DataKeyUnavailableError when the user does not exist. */
  keyForUser(userId: string): Promise<DataKey>;
  /** The data key of that id, to decrypt; DataKeyUnavailableError when it is gone. */
  keyById(keyId: string): Promise<DataKey>;
  /** Crypto-shredding: deletes the user's data keys and forgets them in this process. Returns how many. */
  destroyUserKeys(userId: string): Promise<number>;
  /** Re-wraps every data key under `next`, in one transaction; nothing else changes. Returns how many. */
  rewrapAll(next: MasterKey): Promise<number>;
}

/**
 * Key ids of service keys: `sk_<master key id>`. Earlier releases sealed the payloads of a turn whose row was
 * gone under such a key, derived from the master key; none is written any more (a key that outlives the user
 * is no erasure), but the codec server still opens the ones in histories Temporal keeps.
 */
const SERVICE_KEY_PREFIX = 'sk_';

function deriveServiceKey(master: MasterKey): DataKey {
  const key = Buffer.from(hkdfSync('sha256', master.key, Buffer.alloc(0), 'amy service payload key v1', 32));
  return { keyId: `${SERVICE_KEY_PREFIX}${master.id}`, userId: '', key };
}

const DATA_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const WRAPPED_BYTES = IV_BYTES + DATA_KEY_BYTES + TAG_BYTES;
/** Domain separation for the additional data: these bytes authenticate a wrapped data key and nothing else. */
const AAD_LABEL = 'amy data key v1';
const DEFAULT_CACHE_TTL_MS = 60_000;
/** Rows per UPDATE while re-wrapping: one statement per batch, all in the one transaction. */
const REWRAP_BATCH = 500;

interface StoredDataKey {
  id: string;
  user_id: string;
  wrapped_key: Buffer;
  master_key_id: string;
}

const COLUMNS = 'id, user_id, wrapped_key, master_key_id';

const additionalData = (keyId: string, userId: string) => Buffer.from(`${AAD_LABEL}\0${keyId}\0${userId}`, 'utf8');

function wrap(dataKey: DataKey, master: MasterKey): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', master.key, iv);
  cipher.setAAD(additionalData(dataKey.keyId, dataKey.userId));
  return Buffer.concat([iv, cipher.update(dataKey.key), cipher.final(), cipher.getAuthTag()]);
}

function unwrap(row: StoredDataKey, keyring: MasterKeyring): DataKey {
  const master = keyring.byId(row.master_key_id);
  if (!master) {
    throw new DataKeyUnwrapError(
      `data key ${row.id} is wrapped under master key ${row.master_key_id}, which this process does not hold ` +
        `(its current master key is ${keyring.current.id}): after a rotation, restart it with the new key, or ` +
        'give it the old one in AMY_MASTER_KEY_PREVIOUS (docs/operations.md#keys)',
    );
  }
  const sealed = row.wrapped_key;
  if (sealed.length !== WRAPPED_BYTES) {
    throw new DataKeyUnwrapError(
      `data key ${row.id} is stored as ${sealed.length} bytes, not ${WRAPPED_BYTES}: the row was altered`,
    );
  }
  const decipher = createDecipheriv('aes-256-gcm', master, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(additionalData(row.id, row.user_id));
  decipher.setAuthTag(sealed.subarray(IV_BYTES + DATA_KEY_BYTES));
  try {
    const key = Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, IV_BYTES + DATA_KEY_BYTES)),
      decipher.final(),
    ]);
    return { keyId: row.id, userId: row.user_id, key };
  } catch {
    // GCM's "Unsupported state or unable to authenticate data" says no more than this, and nothing of the keys.
    throw new DataKeyUnwrapError(
      `data key ${row.id} does not unwrap under master key ${row.master_key_id}: the key this process holds under ` +
        'that id is not the one that wrapped it, or the row was altered',
    );
  }
}

/** The foreign key on `user_data_keys.user_id`: no such user. */
const isMissingUser = (err: unknown) =>
  err instanceof DatabaseError && err.code === '23503' && err.constraint === 'user_data_keys_user_id_fkey';

/**
 * Unwrapped keys by id, and which key is each user's, for `ttlMs` after they were read. A destroy bumps the
 * generation, so a read that was already in flight when its user's keys were destroyed is not cached.
 */
class DataKeyCache {
  private readonly keys = new Map<string, { dataKey: DataKey; expiresAt: number }>();
  private readonly keyIdOfUser = new Map<string, string>();
  private generation = 0;
  private lastSweep = Date.now();

  constructor(private readonly ttlMs: number) {}

  get currentGeneration() {
    return this.generation;
  }

  byId(keyId: string): DataKey | undefined {
    const entry = this.keys.get(keyId);
    if (!entry) return undefined;
    if (entry.expiresAt > Date.now()) return entry.dataKey;
    this.forget(entry.dataKey);
    return undefined;
  }

  forUser(userId: string): DataKey | undefined {
    const keyId = this.keyIdOfUser.get(userId);
    return keyId === undefined ? undefined : this.byId(keyId);
  }

  /** `readInGeneration`: the generation when the read began; a destroy since then means the key is not kept. */
  put(dataKey: DataKey, readInGeneration: number) {
    if (this.ttlMs <= 0 || readInGeneration !== this.generation) return;
    const now = Date.now();
    this.sweep(now);
    this.keys.set(dataKey.keyId, { dataKey, expiresAt: now + this.ttlMs });
    this.keyIdOfUser.set(dataKey.userId, dataKey.keyId);
  }

  evictUser(userId: string) {
    this.generation += 1;
    for (const { dataKey } of [...this.keys.values()]) if (dataKey.userId === userId) this.forget(dataKey);
    this.keyIdOfUser.delete(userId);
  }

  private forget(dataKey: DataKey) {
    this.keys.delete(dataKey.keyId);
    if (this.keyIdOfUser.get(dataKey.userId) === dataKey.keyId) this.keyIdOfUser.delete(dataKey.userId);
  }

  /** Drops expired entries at most once a TTL, so users seen once do not stay in memory. */
  private sweep(now: number) {
    if (now - this.lastSweep < this.ttlMs) return;
    this.lastSweep = now;
    for (const { dataKey, expiresAt } of [...this.keys.values()]) if (expiresAt <= now) this.forget(dataKey);
  }
}

/** How many data keys each master key wraps: a rotation is over when only the current one does. */
export async function countDataKeysByMasterKey(
  pool: Pick<Pool, 'query'>,
): Promise<Array<{ masterKeyId: string; count: number }>> {
  const { rows } = await pool.query<{ master_key_id: string; count: number }>(
    'SELECT master_key_id, count(*)::int AS count FROM user_data_keys GROUP BY master_key_id ORDER BY master_key_id',
  );
  return rows.map((row) => ({ masterKeyId: row.master_key_id, count: row.count }));
}

export function createDataKeyStore(
  pool: Pool,
  keyring: MasterKeyring,
  options: { cacheTtlMs?: number } = {},
): DataKeyStore {
  const cache = new DataKeyCache(options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS);

  async function readForUser(userId: string): Promise<StoredDataKey | undefined> {
    const { rows } = await pool.query<StoredDataKey>(`SELECT ${COLUMNS} FROM user_data_keys WHERE user_id = $1`, [
      userId,
    ]);
    return rows[0];
  }

  return {
    async keyForUser(userId) {
      const cached = cache.forUser(userId);
      if (cached) return cached;
      const generation = cache.currentGeneration;
      let row = await readForUser(userId);
      if (!row) {
        const fresh: DataKey = { keyId: `dk_${ulid()}`, userId, key: randomBytes(DATA_KEY_BYTES) };
        // Of concurrent first uses, one inserts and the others do nothing; all then read the one row.
        await pool
          .query(`INSERT INTO user_data_keys (${COLUMNS}) VALUES ($1, $2, $3, $4) ON CONFLICT (user_id) DO NOTHING`, [
            fresh.keyId,
            userId,
            wrap(fresh, keyring.current),
            keyring.current.id,
          ])
          .catch((err: unknown) => {
            if (isMissingUser(err)) throw new DataKeyUnavailableError(`no data key for user ${userId}: no such user`);
            throw err;
          });
        row = await readForUser(userId);
        // Destroyed between the insert and the read: the user is being deleted.
        if (!row) throw new DataKeyUnavailableError(`the data key of user ${userId} was destroyed`);
      }
      const dataKey = unwrap(row, keyring);
      cache.put(dataKey, generation);
      return dataKey;
    },

    async keyById(keyId) {
      if (keyId.startsWith(SERVICE_KEY_PREFIX)) {
        const id = keyId.slice(SERVICE_KEY_PREFIX.length);
        const master = keyring.byId(id);
        if (!master)
          throw new DataKeyUnavailableError(`data key ${keyId} is not available: its master key is not in the ring`);
        return deriveServiceKey({ id, key: master });
      }
      const cached = cache.byId(keyId);
      if (cached) return cached;
      const generation = cache.currentGeneration;
      const { rows } = await pool.query<StoredDataKey>(`SELECT ${COLUMNS} FROM user_data_keys WHERE id = $1`, [keyId]);
      if (!rows[0]) {
        throw new DataKeyUnavailableError(
          `data key ${keyId} is not available: destroyed with its user, or never existed`,
        );
      }
      const dataKey = unwrap(rows[0], keyring);
      cache.put(dataKey, generation);
      return dataKey;
    },

    async destroyUserKeys(userId) {
      // Evicted before and after: a read that began before the delete commits must not be kept either.
      cache.evictUser(userId);
      const { rowCount } = await pool.query('DELETE FROM user_data_keys WHERE user_id = $1', [userId]);
      cache.evictUser(userId);
      return rowCount ?? 0;
    },

    async rewrapAll(next) {
      return inTransaction(pool, async (client) => {
        // FOR UPDATE: a key destroyed meanwhile waits for this transaction, and is not brought back by it.
        const { rows } = await client.query<StoredDataKey>(
          `SELECT ${COLUMNS} FROM user_data_keys ORDER BY id FOR UPDATE`,
        );
        for (let at = 0; at < rows.length; at += REWRAP_BATCH) {
          const batch = rows.slice(at, at + REWRAP_BATCH);
          // A key that cannot be unwrapped throws, and the rollback leaves every row as it was.
          const wrapped = batch.map((row) => wrap(unwrap(row, keyring), next));
          await client.query(
            `UPDATE user_data_keys AS k SET wrapped_key = v.wrapped_key, master_key_id = $3
               FROM unnest($1::text[], $2::bytea[]) AS v(id, wrapped_key) WHERE k.id = v.id`,
            [batch.map((row) => row.id), wrapped, next.id],
          );
        }
        return rows.length;
      });
    },
  };
}
