/**
 * The master key ring read from the environment (platform/crypto/master-key.ts): where the key comes from,
 * which keys are accepted for unwrapping, and errors that name the setting at fault without ever showing
 * what it holds.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createMasterKeyFile,
  loadMasterKeyring,
  MasterKeyConfigError,
  newMasterKey,
  readMasterKeyFile,
} from '../../platform/crypto/master-key';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-master-key-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const base64Key = () => randomBytes(32).toString('base64');

function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** The error `load` throws; fails the test when it throws none. */
function loadError(env: NodeJS.ProcessEnv): Error {
  try {
    loadMasterKeyring(env);
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the ring to be refused');
}

test('AMY_MASTER_KEY: the base64 of 32 bytes is the current key, with an id derived from it', () => {
  const text = base64Key();
  const ring = loadMasterKeyring({ AMY_MASTER_KEY: text });
  expect(ring.current.key.equals(Buffer.from(text, 'base64'))).toBe(true);
  expect(ring.current.id).toMatch(/^[0-9a-f]{16}$/);
  expect(ring.byId(ring.current.id)?.equals(ring.current.key)).toBe(true);
  expect(ring.byId('0000000000000000')).toBeUndefined();
  expect(ring.source).toEqual({ variable: 'AMY_MASTER_KEY' });
  // The id is a function of the key alone: every process holding it names it the same.
  expect(loadMasterKeyring({ AMY_MASTER_KEY: `  ${text}\n` }).current.id).toBe(ring.current.id);
  expect(loadMasterKeyring({ AMY_MASTER_KEY: base64Key() }).current.id).not.toBe(ring.current.id);
  // …and not a plain hash of it, which some other system might also publish.
  expect(ring.current.id).not.toBe(createHash('sha256').update(ring.current.key).digest('hex').slice(0, 16));
});

test('AMY_MASTER_KEY_FILE: the file holds the base64 (a trailing newline is fine); AMY_MASTER_KEY wins over it', () => {
  const text = base64Key();
  const file = writeFile('master.key', `${text}\n`);
  const ring = loadMasterKeyring({ AMY_MASTER_KEY_FILE: file });
  expect(ring.current.key.toString('base64')).toBe(text);
  expect(ring.source).toEqual({ variable: 'AMY_MASTER_KEY_FILE', path: file });

  const inline = base64Key();
  const both = loadMasterKeyring({ AMY_MASTER_KEY: inline, AMY_MASTER_KEY_FILE: file });
  expect(both.current.key.toString('base64')).toBe(inline);
  expect(both.source).toEqual({ variable: 'AMY_MASTER_KEY' });
  // An empty variable, as a compose file's `AMY_MASTER_KEY=` leaves it, counts as unset.
  expect(loadMasterKeyring({ AMY_MASTER_KEY: '', AMY_MASTER_KEY_FILE: file }).source.variable).toBe(
    'AMY_MASTER_KEY_FILE',
  );
});

test('previous keys: from AMY_MASTER_KEY_PREVIOUS, its _FILE and <file>.previous, accepted but never current', () => {
  const current = base64Key();
  const [a, b, c, d] = [base64Key(), base64Key(), base64Key(), base64Key()];
  const file = writeFile('master.key', current);
  writeFile('master.key.previous', `${d}\n`);
  const previousFile = writeFile('previous.keys', `${b}\n${c}\n`);
  const ring = loadMasterKeyring({
    AMY_MASTER_KEY_FILE: file,
    AMY_MASTER_KEY_PREVIOUS: a,
    AMY_MASTER_KEY_PREVIOUS_FILE: previousFile,
  });
  expect(ring.current.key.toString('base64')).toBe(current);
  for (const text of [a, b, c, d]) {
    const id = loadMasterKeyring({ AMY_MASTER_KEY: text }).current.id;
    expect(ring.byId(id)?.toString('base64')).toBe(text);
  }

  // Commas or newlines separate a list.
  const listed = loadMasterKeyring({ AMY_MASTER_KEY: current, AMY_MASTER_KEY_PREVIOUS: `${a}, ${b}\n${c}` });
  for (const text of [a, b, c]) {
    expect(listed.byId(loadMasterKeyring({ AMY_MASTER_KEY: text }).current.id)).toBeDefined();
  }
  // <file>.previous belongs to a key file: a key given inline has none.
  const inline = loadMasterKeyring({ AMY_MASTER_KEY: current });
  expect(inline.byId(loadMasterKeyring({ AMY_MASTER_KEY: d }).current.id)).toBeUndefined();
});

test('no key at all: the error names both settings and how to make a key', () => {
  for (const env of [{}, { AMY_MASTER_KEY: '', AMY_MASTER_KEY_FILE: ' ' }, { AMY_MASTER_KEY_PREVIOUS: base64Key() }]) {
    const err = loadError(env);
    expect(err).toBeInstanceOf(MasterKeyConfigError);
    expect(err.message).toMatch(/^no master key: set AMY_MASTER_KEY .*AMY_MASTER_KEY_FILE/);
    expect(err.message).toContain('openssl rand -base64 32');
  }
});

test('a malformed key is refused, naming the variable and never repeating what it holds', () => {
  const good = base64Key();
  const malformed = [
    randomBytes(16).toString('base64'), // too short
    randomBytes(33).toString('base64'), // too long
    good.slice(0, -1), // the padding lost
    randomBytes(32).toString('hex'), // hex, not base64
    randomBytes(32).toString('base64url').slice(0, 43) + '=', // base64url's alphabet, when it differs
    `${good.slice(0, 20)} ${good.slice(20)}`, // a space inside
  ].filter((text) => text !== good && !/^[A-Za-z0-9+/]{43}=$/.test(text));
  expect(malformed.length).toBeGreaterThanOrEqual(5);
  for (const text of malformed) {
    for (const [env, variable] of [
      [{ AMY_MASTER_KEY: text }, 'AMY_MASTER_KEY'],
      [{ AMY_MASTER_KEY_FILE: writeFile('bad.key', text) }, 'AMY_MASTER_KEY_FILE'],
      [{ AMY_MASTER_KEY: good, AMY_MASTER_KEY_PREVIOUS: text }, 'AMY_MASTER_KEY_PREVIOUS'],
      [
        { AMY_MASTER_KEY: good, AMY_MASTER_KEY_PREVIOUS_FILE: writeFile('bad.prev', text) },
        'AMY_MASTER_KEY_PREVIOUS_FILE',
      ],
    ] as const) {
      const err = loadError(env);
      expect(err).toBeInstanceOf(MasterKeyConfigError);
      // The variable, then a file's path, then for a list the key's place in it.
      expect(err.message).toMatch(
        new RegExp(`^${variable}( \\([^)]*\\))?(, key \\d+,)? must hold the base64 of exactly 32 random bytes`),
      );
      expect(err.message).not.toContain(text);
      for (const part of text.split(/\s+/)) if (part.length >= 8) expect(err.message).not.toContain(part);
      expect(err.message).not.toContain(good);
    }
  }
  // A list says which of its keys is wrong.
  expect(loadError({ AMY_MASTER_KEY: good, AMY_MASTER_KEY_PREVIOUS: `${base64Key()},short` }).message).toMatch(
    /^AMY_MASTER_KEY_PREVIOUS, key 2, must hold/,
  );
});

test('a key file that is missing or unreadable is refused, naming the variable and the path', () => {
  const missing = path.join(dir, 'nope.key');
  expect(loadError({ AMY_MASTER_KEY_FILE: missing }).message).toBe(
    `AMY_MASTER_KEY_FILE names ${missing}, which does not exist`,
  );
  expect(loadError({ AMY_MASTER_KEY: base64Key(), AMY_MASTER_KEY_PREVIOUS_FILE: missing }).message).toBe(
    `AMY_MASTER_KEY_PREVIOUS_FILE names ${missing}, which does not exist`,
  );
  expect(loadError({ AMY_MASTER_KEY_FILE: dir }).message).toMatch(
    new RegExp(`^AMY_MASTER_KEY_FILE names ${dir}, which cannot be read \\(EISDIR\\)$`),
  );
});

test('createMasterKeyFile writes a fresh key readable by its owner only, and never overwrites one', () => {
  const file = path.join(dir, 'master.key');
  const created = createMasterKeyFile(file);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readFileSync(file, 'utf8')).toBe(`${created.key.toString('base64')}\n`);
  const ring = loadMasterKeyring({ AMY_MASTER_KEY_FILE: file });
  expect(ring.current.id).toBe(created.id);
  expect(readMasterKeyFile(file).id).toBe(created.id);

  expect(() => createMasterKeyFile(file)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
  expect(loadMasterKeyring({ AMY_MASTER_KEY_FILE: file }).current.id).toBe(created.id);

  // A given key is written as given: how a rotation puts the next key in place.
  const next = newMasterKey();
  const other = path.join(dir, 'next.key');
  expect(createMasterKeyFile(other, next).id).toBe(next.id);
  expect(readMasterKeyFile(other).key.equals(next.key)).toBe(true);
  expect(newMasterKey().id).not.toBe(next.id);
});
