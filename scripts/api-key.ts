/**
 * An operator's API keys, one command each:
 *
 *   npm run key:list -- <user>                               every key of the user, revoked ones included
 *   npm run key:create -- <user>                             another key (shown once)
 *   npm run key:revoke -- <key>                              refused from the next request on
 *   npm run key:rotate -- <key> [--grace-minutes <n>]        a new key (shown once); the old one revoked
 *                                                            at once, or after n minutes
 *
 * <key> is a key id (`key_…`), the key itself (a leaked one, say) or its display prefix when only one key
 * has it. Exit 0 when done, 1 with `error: …` otherwise.
 */
import { createPgPool } from '../platform/pg-pool';
import {
  AmbiguousApiKeyError,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  RevokedApiKeyError,
  rotateApiKey,
  UnknownApiKeyError,
  UnknownUserError,
  type ApiKeySummary,
} from '../platform/api-keys';
import { CliError, failCommand, resolveDatabaseUrl } from './cli-env';

const USAGE: Record<string, string> = {
  list: 'usage: npm run key:list -- <user>',
  create: 'usage: npm run key:create -- <user>',
  revoke: 'usage: npm run key:revoke -- <key id | key | unique prefix>',
  rotate: 'usage: npm run key:rotate -- <key id | key | unique prefix> [--grace-minutes <n>]',
};

const GRACE_MINUTES_MAX = 30 * 24 * 60;

function parseArgs(command: string, args: string[]): { target: string; graceMinutes: number } {
  const usage = USAGE[command];
  if (!usage) throw new CliError(`unknown command ${JSON.stringify(command)}: ${Object.keys(USAGE).join(', ')}`);
  const rest = [...args];
  let graceMinutes = 0;
  const graceAt = rest.indexOf('--grace-minutes');
  if (graceAt !== -1) {
    if (command !== 'rotate') throw new CliError(`--grace-minutes is for key:rotate only\n${usage}`);
    const raw = rest[graceAt + 1] ?? '';
    graceMinutes = Number(raw);
    if (!/^\d+$/.test(raw) || graceMinutes > GRACE_MINUTES_MAX) {
      throw new CliError(`--grace-minutes takes a whole number of minutes from 0 to ${GRACE_MINUTES_MAX}\n${usage}`);
    }
    rest.splice(graceAt, 2);
  }
  const unknown = rest.filter((arg) => arg.startsWith('--'));
  if (unknown.length) throw new CliError(`unknown option ${unknown.join(', ')}\n${usage}`);
  if (rest.length !== 1) throw new CliError(usage);
  return { target: rest[0], graceMinutes };
}

const iso = (at: Date | null) => (at ? at.toISOString() : 'never');

function status(key: ApiKeySummary, now = Date.now()): string {
  if (!key.revoked_at) return 'active';
  return key.revoked_at.getTime() <= now ? `revoked ${iso(key.revoked_at)}` : `active until ${iso(key.revoked_at)}`;
}

function describe(key: ApiKeySummary): string {
  return `${key.id}  ${key.prefix}…  created ${iso(key.created_at)}  last used ${iso(key.last_used_at)}  ${status(key)}`;
}

function showNewKey(apiKey: string) {
  console.log(`
API key (shown only this once; only its hash is stored):

  ${apiKey}
`);
}

async function run() {
  const [command = '', ...args] = process.argv.slice(2);
  const { target, graceMinutes } = parseArgs(command, args);
  const pool = createPgPool(resolveDatabaseUrl(), 2);
  try {
    switch (command) {
      case 'list': {
        const keys = await listApiKeys(pool, target);
        console.log(keys.length ? keys.map(describe).join('\n') : `${target} has no API keys`);
        break;
      }
      case 'create': {
        const { apiKey } = await createApiKey(pool, target);
        console.log(`Created another API key for ${target}.`);
        showNewKey(apiKey);
        break;
      }
      case 'revoke': {
        const key = await revokeApiKey(pool, target);
        console.log(`Revoked: ${describe(key)}`);
        break;
      }
      case 'rotate': {
        const { apiKey, old } = await rotateApiKey(pool, target, graceMinutes * 60);
        console.log(`Rotated: ${describe(old)}`);
        showNewKey(apiKey);
        break;
      }
    }
  } finally {
    await pool.end();
  }
}

run().catch((err) =>
  failCommand(err, [UnknownUserError, UnknownApiKeyError, AmbiguousApiKeyError, RevokedApiKeyError]),
);
