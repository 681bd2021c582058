/**
 * `npm run terra:replay -- --user <user id or name> --since <YYYY-MM-DD or ISO instant>`: runs the ingestion of a
 * user's stored Terra events again (docs/terra.md#replay), oldest first, e.g. after a fix to the mapping. Each event
 * is ingested as its workflow ingests it (platform/terra/ingest.ts), so a replay writes the same rows as the first
 * time, corrected where the mapping changed, and never doubles one. Prints one line per event (its id, type and
 * counts, never a value) and a total.
 *
 * Exit 0: every event replayed; 1: refused or failed (the reason is printed); 2: no such user.
 */
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { loadMasterKeyring, MasterKeyConfigError } from '../platform/crypto/master-key';
import { ingestTerraEvent } from '../platform/terra/ingest';
import { TerraEventSealError, terraEventIdsOfUser } from '../platform/terra/inbox';
import { CliError, failCommand, masterKeyEnv, resolveDatabaseUrl } from './cli-env';

const USAGE = 'usage: npm run terra:replay -- --user <user id or name> --since <YYYY-MM-DD or ISO 8601 instant>';
const EXIT_UNKNOWN_USER = 2;

function parseSince(text: string): Date {
  const since = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(since.getTime()))
    throw new CliError(`--since: ${text} is not a day or an ISO 8601 instant\n${USAGE}`);
  return since;
}

async function main(args: string[]): Promise<void> {
  let values: { user?: string; since?: string };
  try {
    ({ values } = parseArgs({ args, options: { user: { type: 'string' }, since: { type: 'string' } }, strict: true }));
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n${USAGE}`);
  }
  if (!values.user || !values.since) throw new CliError(USAGE);
  const since = parseSince(values.since);
  const keyring = loadMasterKeyring(masterKeyEnv());
  const pool = new Pool({ connectionString: resolveDatabaseUrl(), max: 2 });
  try {
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM users WHERE id = $1 OR name = $1 LIMIT 1', [
      values.user,
    ]);
    if (!rows[0]) {
      console.error(`error: no user ${values.user}`);
      process.exitCode = EXIT_UNKNOWN_USER;
      return;
    }
    const ids = await terraEventIdsOfUser(pool, rows[0].id, since);
    console.log(`Replaying ${ids.length} Terra event(s) of ${rows[0].id} received since ${since.toISOString()}.`);
    const totals = { days: 0, workouts: 0, labResults: 0, skipped: 0 };
    for (const [i, id] of ids.entries()) {
      const outcome = await ingestTerraEvent({ pool, keyring }, id);
      totals.days += outcome.days ?? 0;
      totals.workouts += outcome.workouts ?? 0;
      totals.labResults += outcome.labResults ?? 0;
      totals.skipped += outcome.skipped?.length ?? 0;
      console.log(
        `[${i + 1}/${ids.length}] ${id} ${outcome.type}: ${outcome.status}` +
          `${outcome.days ? `, ${outcome.days} day(s)` : ''}${outcome.workouts ? `, ${outcome.workouts} workout(s)` : ''}` +
          `${outcome.labResults ? `, ${outcome.labResults} lab result(s)` : ''}${outcome.skipped?.length ? `, ${outcome.skipped.length} field(s) skipped` : ''}`,
      );
    }
    console.log(
      `Done: ${totals.days} day(s), ${totals.workouts} workout(s), ${totals.labResults} lab result(s) written again; ${totals.skipped} field(s) skipped.`,
    );
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2)).catch((err) => failCommand(err, [MasterKeyConfigError, TerraEventSealError]));
