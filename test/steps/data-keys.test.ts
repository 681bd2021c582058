/**
 * Users' data keys on a real Postgres (platform/crypto/data-keys.ts): created once per user however many
 * ask at once, stored only wrapped, gone for good once destroyed (in this process at once, in another within
 * its cache's TTL), carried across a master key rotation, and refused with a named error, holding no key
 * material, when the master key is not the one that wrapped them.
 */
import { randomBytes } from 'node:crypto';
import {
  createDataKeyStore,
  DataKeyUnavailableError,
  DataKeyUnwrapError,
  type DataKey,
} from '../../platform/crypto/data-keys';
import { loadMasterKeyring, newMasterKey, type MasterKeyring } from '../../platform/crypto/master-key';
import { newId } from '../../platform/ids';
import type { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const ringOf = (...keys: Buffer[]) =>
  loadMasterKeyring({
    AMY_MASTER_KEY: keys[0].toString('base64'),
    AMY_MASTER_KEY_PREVIOUS: keys
      .slice(1)
      .map((key) => key.toString('base64'))
      .join(','),
  });

async function newUser(): Promise<string> {
  const id = newId('user');
  await t.pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [id, `dk_${id.slice(-10)}`]);
  return id;
}

interface Row {
  id: string;
  user_id: string;
  wrapped_key: Buffer;
  master_key_id: string;
}

async function rowsOf(userId?: string): Promise<Row[]> {
  const { rows } = await t.pool.query<Row>(
    'SELECT id, user_id, wrapped_key, master_key_id FROM user_data_keys WHERE $1::text IS NULL OR user_id = $1 ORDER BY id',
    [userId ?? null],
  );
  return rows;
}

/** The rejection of `promise`; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: Error) => err,
  );
}

/** Neither the data key nor any master key, in any encoding, is in `text`. */
function expectNoKeyMaterial(text: string, keys: Buffer[]) {
  for (const key of keys) {
    for (const encoded of [key.toString('base64'), key.toString('hex'), key.toString('base64url')]) {
      expect(text).not.toContain(encoded);
      expect(text).not.toContain(encoded.slice(0, 16));
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("a user's data key is made on first use, stored only wrapped, and unwraps to the same key anywhere", async () => {
  const master = randomBytes(32);
  const ring = ringOf(master);
  const userId = await newUser();
  const store = createDataKeyStore(t.pool, ring);

  const key = await store.keyForUser(userId);
  expect(key.keyId).toMatch(/^dk_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(key.userId).toBe(userId);
  expect(key.key).toHaveLength(32);
  expect(await store.keyForUser(userId)).toEqual(key);

  const [row] = await rowsOf(userId);
  expect(row).toMatchObject({ id: key.keyId, user_id: userId, master_key_id: ring.current.id });
  // iv (12) | the 32-byte key encrypted | tag (16): the key itself is nowhere in the row.
  expect(row.wrapped_key).toHaveLength(60);
  expect(row.wrapped_key.includes(key.key)).toBe(false);
  const { rows } = await t.pool.query<{ row: string }>(
    'SELECT row_to_json(k)::text AS row FROM user_data_keys k WHERE user_id = $1',
    [userId],
  );
  expectNoKeyMaterial(rows[0].row, [key.key, master]);

  // Another process with the same master key (no cache) opens the same key, by id or by user.
  const elsewhere = createDataKeyStore(t.pool, ringOf(master), { cacheTtlMs: 0 });
  expect(await elsewhere.keyById(key.keyId)).toEqual(key);
  expect(await elsewhere.keyForUser(userId)).toEqual(key);

  // Each user has a key of their own.
  const other = await store.keyForUser(await newUser());
  expect(other.keyId).not.toBe(key.keyId);
  expect(other.key.equals(key.key)).toBe(false);
});

test('concurrent first uses, in one process and in several, agree on one key', async () => {
  const master = randomBytes(32);
  const userId = await newUser();
  const stores = [0, 1, 2, 3].map(() => createDataKeyStore(t.pool, ringOf(master)));
  const keys = await Promise.all([...stores, ...stores].map((store) => store.keyForUser(userId)));
  expect(new Set(keys.map((key) => key.keyId)).size).toBe(1);
  expect(new Set(keys.map((key) => key.key.toString('hex'))).size).toBe(1);
  expect(await rowsOf(userId)).toHaveLength(1);
});

test('a user that does not exist has no data key, and none is stored for it', async () => {
  const store = createDataKeyStore(t.pool, ringOf(randomBytes(32)));
  const ghost = newId('user');
  const err = await rejection(store.keyForUser(ghost));
  expect(err).toBeInstanceOf(DataKeyUnavailableError);
  expect(err.message).toBe(`no data key for user ${ghost}: no such user`);
  expect(await rowsOf(ghost)).toEqual([]);

  const unknown = await rejection(store.keyById('dk_01JZZZZZZZZZZZZZZZZZZZZZZZ'));
  expect(unknown).toBeInstanceOf(DataKeyUnavailableError);
  expect(unknown.message).toMatch(/^data key dk_01JZZZZZZZZZZZZZZZZZZZZZZZ is not available/);
});

test('destroyUserKeys: gone at once in this process, and in another once its cache expires', async () => {
  const master = randomBytes(32);
  const ttl = 300;
  const here = createDataKeyStore(t.pool, ringOf(master), { cacheTtlMs: ttl });
  const there = createDataKeyStore(t.pool, ringOf(master), { cacheTtlMs: ttl });
  const userId = await newUser();
  const bystander = await newUser();
  const key = await here.keyForUser(userId);
  const kept = await here.keyForUser(bystander);
  expect(await there.keyById(key.keyId)).toEqual(key); // now in the other process's cache

  expect(await here.destroyUserKeys(userId)).toBe(1);
  expect(await rowsOf(userId)).toEqual([]);
  const err = await rejection(here.keyById(key.keyId));
  expect(err).toBeInstanceOf(DataKeyUnavailableError);
  expect(err.message).toBe(`data key ${key.keyId} is not available: destroyed with its user, or never existed`);
  expectNoKeyMaterial(err.message, [key.key, master]);

  // The documented window: the other process still holds the key for at most its TTL…
  expect(await there.keyById(key.keyId)).toEqual(key);
  await sleep(ttl + 50);
  // …and then it is gone there too.
  await expect(there.keyById(key.keyId)).rejects.toBeInstanceOf(DataKeyUnavailableError);

  // Nothing else was touched, and destroying again finds nothing.
  expect(await there.keyById(kept.keyId)).toEqual(kept);
  expect(await here.destroyUserKeys(userId)).toBe(0);

  // Deleting the user destroys their key with them (the foreign key cascades).
  const leaving = await newUser();
  const leavingKey = await here.keyForUser(leaving);
  await t.pool.query('DELETE FROM users WHERE id = $1', [leaving]);
  await expect(createDataKeyStore(t.pool, ringOf(master)).keyById(leavingKey.keyId)).rejects.toBeInstanceOf(
    DataKeyUnavailableError,
  );
  await expect(createDataKeyStore(t.pool, ringOf(master)).keyForUser(leaving)).rejects.toBeInstanceOf(
    DataKeyUnavailableError,
  );
});

test('a read in flight when its key is destroyed does not put the key back in the cache', async () => {
  const userId = await newUser();
  const ring = ringOf(randomBytes(32));
  const key = await createDataKeyStore(t.pool, ring).keyForUser(userId);

  // A pool whose SELECTs answer only when let go: the read below has its row before the delete commits.
  let holding = true;
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  let selected!: () => void;
  const hasRead = new Promise<void>((resolve) => (selected = resolve));
  const slow = {
    async query(text: string, values?: unknown[]) {
      const result = await t.pool.query(text, values);
      if (holding && text.startsWith('SELECT')) {
        selected();
        await gate;
      }
      return result;
    },
  } as unknown as Pool;
  const store = createDataKeyStore(slow, ring, { cacheTtlMs: 60_000 });

  const reading = store.keyById(key.keyId);
  await hasRead;
  holding = false;
  expect(await store.destroyUserKeys(userId)).toBe(1);
  letGo();
  expect(await reading).toEqual(key); // it was read before the key was destroyed…
  await expect(store.keyById(key.keyId)).rejects.toBeInstanceOf(DataKeyUnavailableError); // …and not kept
});

/** A store's keys, wrapped under `ring`'s current key, for a few new users. */
async function keysUnder(ring: MasterKeyring, users = 3): Promise<DataKey[]> {
  const store = createDataKeyStore(t.pool, ring, { cacheTtlMs: 0 });
  return Promise.all(Array.from({ length: users }, async () => store.keyForUser(await newUser())));
}

test('rotation: keys wrapped under the previous master key still unwrap, and rewrapAll moves every row to the next', async () => {
  await t.pool.query('DELETE FROM user_data_keys');
  const [first, second] = [randomBytes(32), randomBytes(32)];
  const before = await keysUnder(ringOf(first), 4);

  // A process given the new key as current and the old one as previous opens the old rows…
  const rotated = ringOf(second, first);
  const during = createDataKeyStore(t.pool, rotated, { cacheTtlMs: 0 });
  for (const key of before) expect(await during.keyById(key.keyId)).toEqual(key);
  // …and wraps new users' keys under the new one.
  const [added] = await keysUnder(rotated, 1);
  expect((await rowsOf(added.userId))[0].master_key_id).toBe(rotated.current.id);

  const usersBefore = await t.pool.query('SELECT id FROM users ORDER BY id');
  const identityBefore = await t.pool.query('SELECT id, user_id, created_at FROM user_data_keys ORDER BY id');
  const wrappedBefore = new Map((await rowsOf()).map((row) => [row.id, row.wrapped_key]));
  expect(await during.rewrapAll(rotated.current)).toBe(5);

  const rows = await rowsOf();
  expect(rows).toHaveLength(5);
  for (const row of rows) {
    expect(row.master_key_id).toBe(rotated.current.id);
    // Re-wrapped, with a fresh iv, even the row that was already under the new key.
    expect(row.wrapped_key.equals(wrappedBefore.get(row.id)!)).toBe(false);
  }
  // The same data keys, now opened with the new master key alone.
  const after = createDataKeyStore(t.pool, ringOf(second), { cacheTtlMs: 0 });
  for (const key of [...before, added]) expect(await after.keyById(key.keyId)).toEqual(key);
  // Nothing but the wrapping changed: the same rows, ids, users and creation times, and the same users.
  expect((await t.pool.query('SELECT id, user_id, created_at FROM user_data_keys ORDER BY id')).rows).toEqual(
    identityBefore.rows,
  );
  expect((await t.pool.query('SELECT id FROM users ORDER BY id')).rows).toEqual(usersBefore.rows);

  // The old master key alone no longer opens anything.
  const stale = createDataKeyStore(t.pool, ringOf(first), { cacheTtlMs: 0 });
  await expect(stale.keyById(before[0].keyId)).rejects.toBeInstanceOf(DataKeyUnwrapError);
});

test('rewrapAll is all or nothing: a row this ring cannot open leaves every row as it was', async () => {
  await t.pool.query('DELETE FROM user_data_keys');
  const [a, b, next] = [randomBytes(32), randomBytes(32), newMasterKey()];
  // More rows than one UPDATE re-wraps (500), so the first batch is written before the last row fails.
  await keysUnder(ringOf(a), 520);
  await keysUnder(ringOf(b), 1); // wrapped under a key the ring below does not hold, and sorted last
  const snapshot = await rowsOf();

  const err = await rejection(createDataKeyStore(t.pool, ringOf(a)).rewrapAll(next));
  expect(err).toBeInstanceOf(DataKeyUnwrapError);
  expect(err.message).toContain(`which this process does not hold (its current master key is ${ringOf(a).current.id})`);
  expectNoKeyMaterial(err.message, [a, b, next.key]);
  expect(await rowsOf()).toEqual(snapshot);
});

test('a wrong master key is refused with a named error that holds no key material', async () => {
  const [right, wrong] = [randomBytes(32), randomBytes(32)];
  const [key] = await keysUnder(ringOf(right), 1);

  // A ring without the key that wrapped it: says which master key is missing, by id.
  const missing = await rejection(createDataKeyStore(t.pool, ringOf(wrong)).keyById(key.keyId));
  expect(missing).toBeInstanceOf(DataKeyUnwrapError);
  expect(missing.message).toBe(
    `data key ${key.keyId} is wrapped under master key ${ringOf(right).current.id}, which this process does not ` +
      `hold (its current master key is ${ringOf(wrong).current.id}): after a rotation, restart it with the new ` +
      'key, or give it the old one in AMY_MASTER_KEY_PREVIOUS (docs/operations.md#keys)',
  );

  // Another key under the right id: GCM's authentication fails, and the error says so in its own words.
  const impostor: MasterKeyring = { current: { id: ringOf(right).current.id, key: wrong }, byId: () => wrong };
  const forged = await rejection(createDataKeyStore(t.pool, impostor).keyById(key.keyId));
  expect(forged).toBeInstanceOf(DataKeyUnwrapError);
  expect(forged.name).toBe('DataKeyUnwrapError');
  expect(forged.message).toBe(
    `data key ${key.keyId} does not unwrap under master key ${ringOf(right).current.id}: the key this process ` +
      'holds under that id is not the one that wrapped it, or the row was altered',
  );
  for (const err of [missing, forged]) expectNoKeyMaterial(`${err.message}\n${err.stack}`, [right, wrong, key.key]);

  // keyForUser refuses the same way, and makes no second key for the user.
  await expect(createDataKeyStore(t.pool, impostor).keyForUser(key.userId)).rejects.toBeInstanceOf(DataKeyUnwrapError);
  expect(await rowsOf(key.userId)).toHaveLength(1);
});

test("a wrapped key moved to another user's row, or altered, does not unwrap", async () => {
  const master = randomBytes(32);
  const [mine, theirs] = await keysUnder(ringOf(master), 2);
  const store = createDataKeyStore(t.pool, ringOf(master), { cacheTtlMs: 0 });
  const [theirRow] = await rowsOf(theirs.userId);

  // The additional data binds the wrapped key to its id and user: copied into my row, it does not open.
  await t.pool.query('UPDATE user_data_keys SET wrapped_key = $1 WHERE id = $2', [theirRow.wrapped_key, mine.keyId]);
  await expect(store.keyById(mine.keyId)).rejects.toThrow(/^data key dk_\w+ does not unwrap under master key/);

  const flipped = Buffer.from(theirRow.wrapped_key);
  flipped[20] ^= 1;
  await t.pool.query('UPDATE user_data_keys SET wrapped_key = $1 WHERE id = $2', [flipped, theirs.keyId]);
  await expect(store.keyById(theirs.keyId)).rejects.toBeInstanceOf(DataKeyUnwrapError);

  await t.pool.query('UPDATE user_data_keys SET wrapped_key = $1 WHERE id = $2', [
    flipped.subarray(0, 40),
    theirs.keyId,
  ]);
  await expect(store.keyById(theirs.keyId)).rejects.toThrow(`data key ${theirs.keyId} is stored as 40 bytes, not 60`);
});
