/**
 * Master key rotation (docs/operations.md#keys):
 *
 *   npm run key:rotate-master [-- --new-key-file <path>]   re-wraps every user's data key under a new master
 *                                                          key (a fresh one, or the one the file holds)
 *   npm run key:rotate-master -- --finish                  after every process was restarted with the new key:
 *                                                          re-wraps what an old process wrapped meanwhile, and
 *                                                          says when the previous key can go
 *
 * Only `user_data_keys` changes, in one transaction: the data keys themselves stay the same, so every history
 * in Temporal, encrypted under them, stays readable and is not touched.
 *
 * Where the new key goes follows where the current one came from:
 * - `AMY_MASTER_KEY_FILE`: the new key is first written to `<file>.next` (0600, flushed to disk), so it exists
 *   before any data key is wrapped under it; after the re-wrap, the old file becomes `<file>.previous`
 *   (which the processes keep accepting until the operator removes it) and `<file>.next` becomes the file.
 *   A rotation interrupted after `<file>.next` was written is resumed by running the command again.
 * - `AMY_MASTER_KEY`: nothing is written; a fresh key is printed once, before the re-wrap (so it cannot be
 *   lost after it), with what to set where.
 *
 * Exit 0 when done, 1 with `error: …` otherwise.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import {
  countDataKeysByMasterKey,
  createDataKeyStore,
  DataKeyUnwrapError,
  type DataKeyStore,
} from '../platform/crypto/data-keys';
import {
  createMasterKeyFile,
  loadMasterKeyring,
  MasterKeyConfigError,
  newMasterKey,
  readMasterKeyFile,
  type MasterKey,
} from '../platform/crypto/master-key';
import { createPgPool } from '../platform/pg-pool';
import { resealWebhookSecrets } from '../platform/webhooks/endpoints';
import { WebhookSecretUnavailableError } from '../platform/webhooks/secrets';
import { CliError, failCommand, masterKeyEnv, resolveDatabaseUrl } from './cli-env';

const USAGE =
  'usage: npm run key:rotate-master [-- --new-key-file <path>]\n       npm run key:rotate-master -- --finish';

type Keyring = ReturnType<typeof loadMasterKeyring>;

const UNTIL_RESTARTED = `Until then, a process opens only the data keys it has cached (for at most a minute) or
   made itself: other payloads fail there with DataKeyUnwrapError, and a turn that failed for it can be
   run again with \`npm run turn:retry\` after the restart.`;

function parseArgs(args: string[]): { finish: boolean; newKeyFile?: string } {
  const rest = [...args];
  let newKeyFile: string | undefined;
  const at = rest.indexOf('--new-key-file');
  if (at !== -1) {
    newKeyFile = rest[at + 1];
    if (!newKeyFile || newKeyFile.startsWith('--')) throw new CliError(`--new-key-file takes a path\n${USAGE}`);
    rest.splice(at, 2);
  }
  const finish = rest.includes('--finish');
  const others = rest.filter((arg) => arg !== '--finish');
  if (others.length) throw new CliError(`unknown argument ${others.join(', ')}\n${USAGE}`);
  if (finish && newKeyFile) throw new CliError(`--finish takes no new key\n${USAGE}`);
  return { finish, newKeyFile };
}

async function withStore<T>(keyring: Keyring, work: (store: DataKeyStore, pool: Pool) => Promise<T>): Promise<T> {
  const pool = createPgPool(resolveDatabaseUrl(), 2);
  try {
    return await work(createDataKeyStore(pool, keyring, { cacheTtlMs: 0 }), pool);
  } finally {
    await pool.end();
  }
}

/** Makes renames in `dir` durable: the new key file must outlive a crash once data keys depend on it. */
function syncDirectory(dir: string) {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `<file>.next`: the key of this rotation, or of an interrupted one, which must be finished with that key. */
function pendingKey(file: string, given: MasterKey | undefined, current: MasterKey): MasterKey {
  const pending = `${file}.next`;
  if (fs.existsSync(pending)) {
    const next = readMasterKeyFile(pending, 'the key file of an interrupted rotation');
    if (given && given.id !== next.id) {
      throw new CliError(
        `${pending} holds the new key of an interrupted rotation (master key ${next.id}), and data keys may be ` +
          'wrapped under it: run this again without --new-key-file to finish that rotation first',
      );
    }
    console.log(`Resuming the interrupted rotation to master key ${next.id} (${pending}).`);
    return next;
  }
  const next = given ?? newMasterKey();
  if (next.id === current.id) return next; // refused by the caller, before anything is written
  createMasterKeyFile(pending, next);
  // The new file keeps the permissions the service reads the current one with (a group, say).
  const { mode, uid, gid } = fs.statSync(file);
  fs.chmodSync(pending, mode & 0o777);
  try {
    fs.chownSync(pending, uid, gid);
  } catch {
    // Only root may give a file away; the operator owns both files otherwise.
  }
  return next;
}

async function rotate(newKeyFile: string | undefined) {
  const keyring = loadMasterKeyring(masterKeyEnv());
  const { current, source } = keyring;
  resolveDatabaseUrl(); // no database: say so before writing anything
  const given = newKeyFile ? readMasterKeyFile(newKeyFile, '--new-key-file') : undefined;
  const next =
    source.variable === 'AMY_MASTER_KEY_FILE' ? pendingKey(source.path, given, current) : (given ?? newMasterKey());
  if (next.id === current.id)
    throw new CliError(`the new key is the current master key (${current.id}): nothing to rotate`);

  if (source.variable === 'AMY_MASTER_KEY' && !given) {
    console.log(`
New master key ${next.id} (shown only this once; it is stored nowhere):

  ${next.key.toString('base64')}
`);
  }

  // The ring also holds the new key: a resumed rotation may find rows already wrapped under it.
  const withNext: Keyring = { ...keyring, byId: (id) => (id === next.id ? next.key : keyring.byId(id)) };
  let count: number;
  let secrets: number;
  try {
    // Webhook signing secrets are sealed by the master key too (platform/webhooks/secrets.ts).
    [count, secrets] = await withStore(withNext, async (store, pool) => [
      await store.rewrapAll(next),
      await resealWebhookSecrets(pool, withNext, next),
    ]);
  } catch (err) {
    console.error(
      source.variable === 'AMY_MASTER_KEY_FILE'
        ? `Nothing was re-wrapped. ${source.path}.next holds the new key: run this again to resume the rotation, ` +
            'or delete that file to abandon it.'
        : `Nothing was re-wrapped: the current master key stays in use${given ? '' : ', and the key above is not'}.`,
    );
    throw err;
  }
  console.log(`Re-wrapped ${count} data keys under master key ${next.id} (was ${current.id}).`);
  console.log(`Re-sealed the signing secrets of ${secrets} webhook endpoint(s) under it.`);

  if (source.variable === 'AMY_MASTER_KEY_FILE') {
    const file = source.path;
    // Renames only, each atomic: whenever a process starts, the file holds one key or the other, whole.
    fs.rmSync(`${file}.previous.tmp`, { force: true });
    fs.linkSync(file, `${file}.previous.tmp`);
    fs.renameSync(`${file}.previous.tmp`, `${file}.previous`);
    fs.renameSync(`${file}.next`, file);
    syncDirectory(path.dirname(file));
    console.log(`
${file} now holds the new master key.
The old one is kept as ${file}.previous: every process started from now on accepts it too.

1. Restart every API and worker process now.
   ${UNTIL_RESTARTED}
2. Then run \`npm run key:rotate-master -- --finish\`, and remove ${file}.previous when it says so.`);
  } else {
    const newSetting = given
      ? `AMY_MASTER_KEY_FILE=${newKeyFile} (or AMY_MASTER_KEY=<what it holds>)`
      : 'AMY_MASTER_KEY=<the new key above>';
    console.log(`
1. Give every API and worker process, and the commands that read histories (turn:replay, turn:retry),
   the new key, keep the old one as a previous key, and restart them:

     ${newSetting}
     AMY_MASTER_KEY_PREVIOUS=<the key AMY_MASTER_KEY holds now>

   ${UNTIL_RESTARTED}
2. Then run \`npm run key:rotate-master -- --finish\` with those settings, and remove
   AMY_MASTER_KEY_PREVIOUS when it says so.`);
  }
}

/** Re-wraps under the current key what processes still running the old one wrapped during the rotation. */
async function finish() {
  const keyring = loadMasterKeyring(masterKeyEnv());
  const { current, source } = keyring;
  const { count, secrets, byMasterKey } = await withStore(keyring, async (store, pool) => ({
    count: await store.rewrapAll(current),
    secrets: await resealWebhookSecrets(pool, keyring, current),
    byMasterKey: await countDataKeysByMasterKey(pool),
  }));
  console.log(`Re-wrapped ${count} data keys under the current master key ${current.id}.`);
  console.log(`Re-sealed the signing secrets of ${secrets} webhook endpoint(s) under it.`);
  const others = byMasterKey.filter((entry) => entry.masterKeyId !== current.id);
  if (others.length) {
    const list = others.map((entry) => `${entry.count} under ${entry.masterKeyId}`).join(', ');
    console.log(
      `Since then, a process still running an older master key wrapped more (${list}): restart every API ` +
        'and worker process with the new key, and run this again.',
    );
    return;
  }
  const previous =
    source.variable === 'AMY_MASTER_KEY_FILE'
      ? `${source.path}.previous (if it exists) and AMY_MASTER_KEY_PREVIOUS(_FILE), if set`
      : 'AMY_MASTER_KEY_PREVIOUS(_FILE)';
  console.log(`Every data key is wrapped under it: the previous master keys are no longer needed. Remove ${previous}.`);
}

async function run() {
  const { finish: finishing, newKeyFile } = parseArgs(process.argv.slice(2));
  await (finishing ? finish() : rotate(newKeyFile));
}

run().catch((err) => failCommand(err, [MasterKeyConfigError, DataKeyUnwrapError, WebhookSecretUnavailableError]));
