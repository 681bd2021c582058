/** `npm run data:import -- <user-name> <file.csv>`: loads a daily-summary CSV for a user, all rows or none. */
import fs from 'node:fs';
import { DailySummaryCsvError, importDailySummary, MAX_CSV_BYTES } from '../platform/health-data/csv-import';
import { createPgPool } from '../platform/pg-pool';
import { findUserByName } from '../platform/users';
import { CliError, failCommand, resolveDatabaseUrl } from './cli-env';

const USAGE = 'usage: npm run data:import -- <user-name> <file.csv>';

function readCsvFile(file: string): string {
  let stats: fs.Stats;
  try {
    stats = fs.statSync(file);
  } catch (err) {
    throw new CliError(
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : err}`,
    );
  }
  if (!stats.isFile()) throw new CliError(`${file} is not a file`);
  // Checked before reading, so a huge file is refused without loading it into memory.
  if (stats.size > MAX_CSV_BYTES) {
    throw new CliError(`${file} is ${stats.size} bytes; the limit is ${MAX_CSV_BYTES} (5 MB)`);
  }
  return fs.readFileSync(file, 'utf8');
}

async function run() {
  const args = process.argv.slice(2);
  if (args.length !== 2) throw new CliError(USAGE);
  const [userName, file] = args;
  const text = readCsvFile(file);
  const pool = createPgPool(resolveDatabaseUrl(), 2);
  try {
    const user = await findUserByName(pool, userName);
    if (!user) throw new CliError(`no user named "${userName}"; create one with: npm run user:create -- ${userName}`);
    const { inserted, updated } = await importDailySummary(pool, user.id, text);
    console.log(`Imported ${file} for ${user.name}: ${inserted} day(s) inserted, ${updated} updated.`);
  } catch (err) {
    if (!(err instanceof DailySummaryCsvError)) throw err;
    for (const { line, message } of err.errors) console.error(`line ${line}: ${message}`);
    throw new CliError(`${file} was not imported; fix the lines above and run the import again`);
  } finally {
    await pool.end();
  }
}

run().catch((err) => failCommand(err));
