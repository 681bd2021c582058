/**
 * `npm run user:create -- <name>`: a new user with an API key, printed once. The user starts with no
 * health data: load theirs with `npm run data:import`. (`npm run demo:user` makes one with a synthetic
 * history, for trying the service.)
 */
import type { Pool } from 'pg';
import { createPgPool } from '../platform/pg-pool';
import { createUserWithApiKey, deleteUser, InvalidUserNameError, UserExistsError } from '../platform/users';
import { CliError, failCommand, resolveDatabaseUrl } from './cli-env';

/** Gives the new user health data and says what it gave; a failure undoes the user. */
export type HealthDataSeeder = (pool: Pool, userId: string) => Promise<string>;

function parseName(args: string[], usage: string, seeds: boolean): string {
  const flags = args.filter((arg) => arg.startsWith('--'));
  const names = args.filter((arg) => !arg.startsWith('--'));
  // Synthetic data is dev tooling, which shipped scripts never load: the option says where it is instead.
  if (flags.includes('--demo-data') && !seeds)
    throw new CliError(
      `--demo-data: a user with a synthetic history is made by the dev tooling, not by this script: ` +
        `npm run demo:user -- ${names[0] ?? '<name>'}`,
    );
  if (flags.length) throw new CliError(`unknown option ${flags.join(', ')}\n${usage}`);
  if (names.length !== 1) throw new CliError(usage);
  return names[0];
}

export async function createUserCommand(args: string[], usage: string, seedHealthData?: HealthDataSeeder) {
  const name = parseName(args, usage, seedHealthData !== undefined);
  const pool = createPgPool(resolveDatabaseUrl(), 2);
  try {
    const { user, apiKey } = await createUserWithApiKey(pool, name);
    let data = 'no health data: load a CSV with `npm run data:import`';
    if (seedHealthData) {
      // Undo the user if seeding fails: its key has not been shown yet, so a retry must be able to start over.
      data = await seedHealthData(pool, user.id).catch(async (err: unknown) => {
        await deleteUser(pool, user.id);
        throw err;
      });
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

export const failUserCommand = (err: unknown) => failCommand(err, [InvalidUserNameError, UserExistsError]);

if (require.main === module) {
  createUserCommand(process.argv.slice(2), 'usage: npm run user:create -- <name>').catch(failUserCommand);
}
