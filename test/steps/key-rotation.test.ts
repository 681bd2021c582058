/**
 * `npm run key:rotate-master` as an operator runs it (scripts/key-rotate-master.ts), against a real
 * Postgres: every data key re-wrapped under the new master key and still the same key, the new master key
 * written where the current one came from (the old one kept beside it) or printed once, an interrupted
 * rotation resumed with its own key, `--finish` for what old processes wrapped meanwhile, and refusals that
 * change nothing.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDataKeyStore, type DataKey } from '../../platform/crypto/data-keys';
import {
  createMasterKeyFile,
  loadMasterKeyring,
  newMasterKey,
  readMasterKeyFile,
  type MasterKey,
} from '../../platform/crypto/master-key';
import { newId } from '../../platform/ids';
import { runCli, type CliResult } from '../support/cli';
import { createTestDatabase, type TestDatabase } from '../support/database';

const SCRIPT = 'scripts/key-rotate-master.ts';

let t: TestDatabase;
let dir: string;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-key-rotation-'));
  await t.pool.query('DELETE FROM user_data_keys');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the command with only the master key settings given here (empty ones count as unset). */
function rotate(args: string[], settings: Record<string, string>): Promise<CliResult> {
  return runCli(SCRIPT, args, {
    DATABASE_URL: t.url,
    AMY_MASTER_KEY: '',
    AMY_MASTER_KEY_FILE: '',
    AMY_MASTER_KEY_PREVIOUS: '',
    AMY_MASTER_KEY_PREVIOUS_FILE: '',
    ...settings,
  });
}

const b64 = (key: MasterKey) => key.key.toString('base64');

/** Data keys for `count` new users, made by a process whose master key settings are `settings`. */
async function dataKeysUnder(settings: NodeJS.ProcessEnv, count: number): Promise<DataKey[]> {
  const store = createDataKeyStore(t.pool, loadMasterKeyring(settings), { cacheTtlMs: 0 });
  const keys: DataKey[] = [];
  for (let i = 0; i < count; i++) {
    const userId = newId('user');
    await t.pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [userId, `rot_${userId.slice(-12)}`]);
    keys.push(await store.keyForUser(userId));
  }
  return keys;
}

async function masterKeyIds(): Promise<string[]> {
  const { rows } = await t.pool.query<{ master_key_id: string }>('SELECT master_key_id FROM user_data_keys');
  return [...new Set(rows.map((row) => row.master_key_id))];
}

/** Every key opens, the same as before, for a process whose settings are `settings`. */
async function expectOpens(settings: NodeJS.ProcessEnv, keys: DataKey[]) {
  const store = createDataKeyStore(t.pool, loadMasterKeyring(settings), { cacheTtlMs: 0 });
  for (const key of keys) expect(await store.keyById(key.keyId)).toEqual(key);
}

test('from a key file: re-wraps every data key, puts the new key in the file and keeps the old one beside it', async () => {
  const file = path.join(dir, 'master.key');
  const old = createMasterKeyFile(file);
  fs.chmodSync(file, 0o640); // as the operator set it up for the service's group
  const keys = await dataKeysUnder({ AMY_MASTER_KEY_FILE: file }, 3);
  const identity = await t.pool.query('SELECT id, user_id, created_at FROM user_data_keys ORDER BY id');

  const result = await rotate([], { AMY_MASTER_KEY_FILE: file });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const next = readMasterKeyFile(file);
  expect(next.id).not.toBe(old.id);
  expect(result.stdout).toContain(`Re-wrapped 3 data keys under master key ${next.id} (was ${old.id}).`);
  expect(result.stdout).toContain(`${file}.previous`);
  expect(result.stdout).toContain('npm run key:rotate-master -- --finish');
  // No key is printed when it went to a file.
  for (const key of [old, next]) expect(result.stdout).not.toContain(b64(key));

  expect(readMasterKeyFile(`${file}.previous`).id).toBe(old.id);
  expect(fs.existsSync(`${file}.next`)).toBe(false);
  expect(fs.statSync(file).mode & 0o777).toBe(0o640);
  expect(await masterKeyIds()).toEqual([next.id]);
  expect((await t.pool.query('SELECT id, user_id, created_at FROM user_data_keys ORDER BY id')).rows).toEqual(
    identity.rows,
  );
  // The same data keys: with the file (and its .previous), and with the new key alone.
  await expectOpens({ AMY_MASTER_KEY_FILE: file }, keys);
  await expectOpens({ AMY_MASTER_KEY: b64(next) }, keys);

  // A process not yet restarted still wraps new users' keys under the old key; --finish moves them too.
  const straggler = await dataKeysUnder({ AMY_MASTER_KEY: b64(old) }, 1);
  expect(await masterKeyIds()).toEqual(expect.arrayContaining([old.id, next.id]));
  const finished = await rotate(['--finish'], { AMY_MASTER_KEY_FILE: file });
  expect(finished.code).toBe(0);
  expect(finished.stdout).toContain(`Re-wrapped 4 data keys under the current master key ${next.id}.`);
  expect(finished.stdout).toContain(`the previous master keys are no longer needed. Remove ${file}.previous`);
  expect(await masterKeyIds()).toEqual([next.id]);
  fs.rmSync(`${file}.previous`);
  await expectOpens({ AMY_MASTER_KEY_FILE: file }, [...keys, ...straggler]);
});

test('from AMY_MASTER_KEY: prints the new key once, before the re-wrap, and what to set', async () => {
  const old = newMasterKey();
  const keys = await dataKeysUnder({ AMY_MASTER_KEY: b64(old) }, 2);

  const result = await rotate([], { AMY_MASTER_KEY: b64(old) });
  expect(result.code).toBe(0);
  const printed = /New master key ([0-9a-f]{16}) \(shown only this once; it is stored nowhere\):\n\n {2}(\S+)\n/.exec(
    result.stdout,
  );
  expect(printed).not.toBeNull();
  const [, id, text] = printed!;
  expect(result.stdout.split(text)).toHaveLength(2); // printed exactly once
  expect(result.stdout).not.toContain(b64(old));
  expect(result.stdout.indexOf(text)).toBeLessThan(result.stdout.indexOf('Re-wrapped 2 data keys'));
  expect(result.stdout).toContain('AMY_MASTER_KEY=<the new key above>');
  expect(result.stdout).toContain('AMY_MASTER_KEY_PREVIOUS=<the key AMY_MASTER_KEY holds now>');

  const next = loadMasterKeyring({ AMY_MASTER_KEY: text }).current;
  expect(next.id).toBe(id);
  expect(await masterKeyIds()).toEqual([id]);
  await expectOpens({ AMY_MASTER_KEY: text }, keys);
  await expectOpens({ AMY_MASTER_KEY: text, AMY_MASTER_KEY_PREVIOUS: b64(old) }, keys);

  const finished = await rotate(['--finish'], { AMY_MASTER_KEY: text, AMY_MASTER_KEY_PREVIOUS: b64(old) });
  expect(finished.code).toBe(0);
  expect(finished.stdout).toContain('Remove AMY_MASTER_KEY_PREVIOUS(_FILE).');
});

test('--new-key-file: the key the operator made is the one used, and written where the current one came from', async () => {
  const file = path.join(dir, 'master.key');
  const old = createMasterKeyFile(file);
  const keys = await dataKeysUnder({ AMY_MASTER_KEY_FILE: file }, 2);
  const made = createMasterKeyFile(path.join(dir, 'made-by-kms.key'));

  const result = await rotate(['--new-key-file', path.join(dir, 'made-by-kms.key')], { AMY_MASTER_KEY_FILE: file });
  expect(result.code).toBe(0);
  expect(readMasterKeyFile(file).id).toBe(made.id);
  expect(readMasterKeyFile(`${file}.previous`).id).toBe(old.id);
  expect(await masterKeyIds()).toEqual([made.id]);
  await expectOpens({ AMY_MASTER_KEY: b64(made) }, keys);

  // From AMY_MASTER_KEY, the file is named in the instructions and the key is not printed.
  const again = await rotate(['--new-key-file', file], { AMY_MASTER_KEY: b64(made) });
  expect(again.code).toBe(1);
  expect(again.stderr).toBe(`error: the new key is the current master key (${made.id}): nothing to rotate\n`);
  const third = createMasterKeyFile(path.join(dir, 'third.key'));
  const viaEnv = await rotate(['--new-key-file', path.join(dir, 'third.key')], { AMY_MASTER_KEY: b64(made) });
  expect(viaEnv.code).toBe(0);
  expect(viaEnv.stdout).toContain(`AMY_MASTER_KEY_FILE=${path.join(dir, 'third.key')}`);
  expect(viaEnv.stdout).not.toContain(b64(third));
  expect(await masterKeyIds()).toEqual([third.id]);
});

test('an interrupted rotation is resumed with its own key, and a different one is refused', async () => {
  const file = path.join(dir, 'master.key');
  const old = createMasterKeyFile(file);
  const keys = await dataKeysUnder({ AMY_MASTER_KEY_FILE: file }, 3);
  // Interrupted after the re-wrap, before the files were swapped: every row is under <file>.next's key.
  const pending = createMasterKeyFile(`${file}.next`);
  const ring = loadMasterKeyring({ AMY_MASTER_KEY: b64(old) });
  await createDataKeyStore(t.pool, ring).rewrapAll(pending);

  const other = createMasterKeyFile(path.join(dir, 'other.key'));
  const refused = await rotate(['--new-key-file', path.join(dir, 'other.key')], { AMY_MASTER_KEY_FILE: file });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`error: ${file}.next holds the new key of an interrupted rotation`);
  expect(await masterKeyIds()).toEqual([pending.id]);
  expect(readMasterKeyFile(file).id).toBe(old.id);

  const resumed = await rotate([], { AMY_MASTER_KEY_FILE: file });
  expect(resumed.code).toBe(0);
  expect(resumed.stdout).toContain(`Resuming the interrupted rotation to master key ${pending.id}`);
  expect(readMasterKeyFile(file).id).toBe(pending.id);
  expect(readMasterKeyFile(`${file}.previous`).id).toBe(old.id);
  expect(await masterKeyIds()).toEqual([pending.id]);
  await expectOpens({ AMY_MASTER_KEY: b64(pending) }, keys);
  expect(other.id).not.toBe(pending.id);
});

test('a data key the ring cannot open stops the rotation before anything changes; running again resumes', async () => {
  const file = path.join(dir, 'master.key');
  const old = createMasterKeyFile(file);
  const keys = await dataKeysUnder({ AMY_MASTER_KEY_FILE: file }, 2);
  const stranger = newMasterKey();
  const [orphan] = await dataKeysUnder({ AMY_MASTER_KEY: b64(stranger) }, 1);
  const before = await t.pool.query('SELECT * FROM user_data_keys ORDER BY id');

  const failed = await rotate([], { AMY_MASTER_KEY_FILE: file });
  expect(failed.code).toBe(1);
  expect(failed.stderr).toContain(`Nothing was re-wrapped. ${file}.next holds the new key`);
  expect(failed.stderr).toContain(
    `error: data key ${orphan.keyId} is wrapped under master key ${stranger.id}, which this process does not hold`,
  );
  for (const key of [old, stranger]) expect(failed.stderr + failed.stdout).not.toContain(b64(key));
  expect((await t.pool.query('SELECT * FROM user_data_keys ORDER BY id')).rows).toEqual(before.rows);
  expect(readMasterKeyFile(file).id).toBe(old.id);
  const pending = readMasterKeyFile(`${file}.next`);

  // Given the missing key as a previous one, the same rotation goes through, with the same new key.
  const resumed = await rotate([], { AMY_MASTER_KEY_FILE: file, AMY_MASTER_KEY_PREVIOUS: b64(stranger) });
  expect(resumed.code).toBe(0);
  expect(readMasterKeyFile(file).id).toBe(pending.id);
  await expectOpens({ AMY_MASTER_KEY: b64(pending) }, [...keys, orphan]);
});

test('refusals: no master key, a malformed one, an unknown argument — without showing a key', async () => {
  const none = await rotate([], {});
  expect(none.code).toBe(1);
  expect(none.stderr).toMatch(/^error: no master key: set AMY_MASTER_KEY /);

  const malformed = randomBytes(20).toString('base64');
  const bad = await rotate([], { AMY_MASTER_KEY: malformed });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/^error: AMY_MASTER_KEY must hold the base64 of exactly 32 random bytes/);
  expect(bad.stderr).not.toContain(malformed);

  const unknown = await rotate(['--now'], { AMY_MASTER_KEY: b64(newMasterKey()) });
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('error: unknown argument --now\nusage: npm run key:rotate-master');
});
