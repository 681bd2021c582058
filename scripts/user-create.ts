/** `npm run user:create -- <name> [--no-data]`: a new user with an API key and, by default, synthetic health data. */
import { seedDemoHealthData } from '../dev/synthetic-data/demo-user';
import { createPgPool } from '../platform/pg-pool';
import { createUserWithApiKey, deleteUser, InvalidUserNameError, UserExistsError } from '../platform/users';
import { CliError, failCommand, resolveDatabaseUrl } from './cli-env';

const USAGE = 'usage: npm run user:create -- <name> [--no-data]';

function parseArgs(args: string[]) {
  const flags = args.filter((arg) => arg.startsWith('--'));
  const names = args.filter((arg) => !arg.startsWith('--'));
  const unknown = flags.filter((flag) => flag !== '--no-data');
  if (unknown.length) throw new CliError(`unknown option ${unknown.join(', ')}\n${USAGE}`);
  if (names.length !== 1) throw new CliError(USAGE);
  return { name: names[0], withData: !flags.includes('--no-data') };
}

async function run() {
  const { name, withData } = parseArgs(process.argv.slice(2));
  const pool = createPgPool(resolveDatabaseUrl(), 2);
  try {
    const { user, apiKey } = await createUserWithApiKey(pool, name);
    let data = 'no health data (--no-data): load a CSV with `npm run data:import`';
    if (withData) {
      // Undo the user if seeding fails: its key has not been shown yet, so a retry must be able to start over.
      const counts = await seedDemoHealthData(pool, user.id).catch(async (err: unknown) => {
        await deleteUser(pool, user.id);
        throw err;
      });
      data = `${counts.days} days of synthetic health data up to today, ${counts.workouts} workouts, ${counts.biomarkers} lab results`;
    }
    console.log(`Created user ${user.name} (${user.id}) with ${data}.`);
    const baseUrl = process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
    console.log(`
API key (shown only this once; only its hash is stored):

  ${apiKey}

Send it as a bearer token:

  export AMY_API_KEY=${apiKey}
  curl -H "Authorization: Bearer $AMY_API_KEY" -H 'Content-Type: application/json' \\
    -d '{"messages":[{"role":"user","content":"How has my sleep been lately?"}],"stream":false}' \\
    ${baseUrl}/v1/turns`);
  } finally {
    await pool.end();
  }
}

run().catch((err) => failCommand(err, [InvalidUserNameError, UserExistsError]));
