/**
 * The master key ring (docs/operations.md#keys): the key every user's data key is stored wrapped under
 * (platform/crypto/data-keys.ts), and during a rotation the keys it replaced, still accepted for unwrapping.
 *
 * - The current key comes from `AMY_MASTER_KEY` (the base64 of 32 random bytes), or else from the file that
 *   `AMY_MASTER_KEY_FILE` names. When it comes from a file, `<file>.previous` is read too if it exists: that
 *   is where `npm run key:rotate-master` keeps the key it replaced, so the processes restarted after a
 *   rotation still open a data key that a process running the old key wrapped in the meantime.
 * - `AMY_MASTER_KEY_PREVIOUS` and `AMY_MASTER_KEY_PREVIOUS_FILE` list more accepted keys, separated by commas
 *   or one a line.
 * - Each key has an id derived from it, stored beside every data key it wraps, so a ring with several keys
 *   knows which one to try and an error can say which key is missing without showing any key.
 *
 * No message built here ever holds key material: a malformed key is described by its length only.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';

const MASTER_KEY_BYTES = 32;
/** The base64 of 32 bytes: 43 characters and one `=`, as `openssl rand -base64 32` prints it. */
const BASE64_OF_32_BYTES = /^[A-Za-z0-9+/]{43}=$/;
/** Domain separation: this hash names a master key and is never used as, or compared with, anything else. */
const ID_LABEL = 'amy master key id v1\0';

export interface MasterKey {
  /** 16 hex digits of a SHA-256 over a fixed label and the key: names the key, reveals nothing of it. */
  id: string;
  key: Buffer;
}

export interface MasterKeyring {
  /** Wraps every new data key, and every data key a rotation re-wraps. */
  current: MasterKey;
  /** The key of that id, current or previous; undefined when this ring does not hold it. */
  byId(id: string): Buffer | undefined;
}

/** Where the current key came from: a rotation writes the next key back to a file, and only to a file. */
type MasterKeySource = { variable: 'AMY_MASTER_KEY' } | { variable: 'AMY_MASTER_KEY_FILE'; path: string };

/** A master key setting that is missing or malformed: the message names the variable (or file), never the key. */
export class MasterKeyConfigError extends Error {
  override name = 'MasterKeyConfigError';
}

const HOW_TO_MAKE_ONE = '`openssl rand -base64 32` prints one';

function masterKeyId(key: Buffer): string {
  return createHash('sha256').update(ID_LABEL).update(key).digest('hex').slice(0, 16);
}

function masterKey(key: Buffer): MasterKey {
  return { id: masterKeyId(key), key };
}

/** `where` names the variable or file the text came from, for the error. */
function parseMasterKey(text: string, where: string): MasterKey {
  const trimmed = text.trim();
  if (!BASE64_OF_32_BYTES.test(trimmed)) {
    const got = /^[A-Za-z0-9+/=]*$/.test(trimmed)
      ? `${trimmed.length} characters`
      : `${trimmed.length} characters, some not base64`;
    throw new MasterKeyConfigError(
      `${where} must hold the base64 of exactly ${MASTER_KEY_BYTES} random bytes (44 characters ending in "="; ` +
        `${HOW_TO_MAKE_ONE}); it holds ${got}`,
    );
  }
  return masterKey(Buffer.from(trimmed, 'base64'));
}

/** Several keys, separated by commas, spaces or newlines (base64 has none of these). */
function parseMasterKeyList(text: string, where: string): MasterKey[] {
  const entries = text.split(/[\s,]+/).filter((entry) => entry !== '');
  return entries.map((entry, i) => parseMasterKey(entry, entries.length > 1 ? `${where}, key ${i + 1},` : where));
}

function readKeyFile(path: string, variable: string): string {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'which does not exist' : `which cannot be read (${code ?? String(err)})`;
    throw new MasterKeyConfigError(`${variable} names ${path}, ${why}`);
  }
}

/** A master key from a file holding its base64 (such as `createMasterKeyFile` writes). */
export function readMasterKeyFile(path: string, variable = 'the master key file'): MasterKey {
  return parseMasterKey(readKeyFile(path, variable), `${variable} (${path})`);
}

/** An empty variable counts as unset, as a compose file's `AMY_MASTER_KEY=` leaves it. */
const setting = (value: string | undefined) => (value?.trim() ? value : undefined);

/** The ring the environment describes; throws MasterKeyConfigError, naming the variable, when it is wrong. */
export function loadMasterKeyring(env: NodeJS.ProcessEnv = process.env): MasterKeyring & { source: MasterKeySource } {
  const inline = setting(env.AMY_MASTER_KEY);
  const file = setting(env.AMY_MASTER_KEY_FILE);
  let current: MasterKey;
  let source: MasterKeySource;
  if (inline !== undefined) {
    current = parseMasterKey(inline, 'AMY_MASTER_KEY');
    source = { variable: 'AMY_MASTER_KEY' };
  } else if (file !== undefined) {
    current = readMasterKeyFile(file, 'AMY_MASTER_KEY_FILE');
    source = { variable: 'AMY_MASTER_KEY_FILE', path: file };
  } else {
    throw new MasterKeyConfigError(
      'no master key: set AMY_MASTER_KEY to the base64 of 32 random bytes (' +
        `${HOW_TO_MAKE_ONE}), or AMY_MASTER_KEY_FILE to a file holding it (docs/operations.md#keys)`,
    );
  }

  const previous: MasterKey[] = [];
  const previousInline = setting(env.AMY_MASTER_KEY_PREVIOUS);
  if (previousInline !== undefined) previous.push(...parseMasterKeyList(previousInline, 'AMY_MASTER_KEY_PREVIOUS'));
  const previousFile = setting(env.AMY_MASTER_KEY_PREVIOUS_FILE);
  if (previousFile !== undefined) {
    const where = `AMY_MASTER_KEY_PREVIOUS_FILE (${previousFile})`;
    previous.push(...parseMasterKeyList(readKeyFile(previousFile, 'AMY_MASTER_KEY_PREVIOUS_FILE'), where));
  }
  if (source.variable === 'AMY_MASTER_KEY_FILE' && fs.existsSync(`${source.path}.previous`)) {
    const kept = `${source.path}.previous`;
    previous.push(...parseMasterKeyList(readKeyFile(kept, 'the previous master key file'), kept));
  }

  const byId = new Map<string, Buffer>([...previous, current].map((k) => [k.id, k.key]));
  return { current, byId: (id) => byId.get(id), source };
}

/** A fresh master key, from the operating system's random source. */
export function newMasterKey(): MasterKey {
  return masterKey(randomBytes(MASTER_KEY_BYTES));
}

/**
 * Writes a master key (a fresh one unless given) to a new file readable by its owner only, and flushes it
 * to disk before returning: the rotation relies on the key being there before any data key is wrapped
 * under it. Never overwrites: replacing a master key file loses every data key wrapped under its key.
 */
export function createMasterKeyFile(path: string, key: MasterKey = newMasterKey()): MasterKey {
  const fd = fs.openSync(path, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${key.key.toString('base64')}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return key;
}
