/**
 * Starts Postgres the ways the test suites do, from the checkout this file is in, and prints what it
 * found as one JSON line. test/faults/private-checkout.test.ts runs it (`node --import tsx`) in a
 * copy of the checkout under a private directory:
 *
 * - a throwaway cluster, stopped, started again on the same files and destroyed
 *   (./restartable-postgres.ts, the fault suites' own cluster; the global setup's is made the same way);
 * - with a data directory as argument, the cluster kept there (as `npm start` left it), asked how many
 *   users it holds.
 */
import { Client } from 'pg';
import { startLocalPostgres } from '../../dev/stack/local-postgres';
import { startRestartablePostgres } from './restartable-postgres';

async function ask<T>(url: string, sql: string): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0] as T;
  } finally {
    await client.end();
  }
}

async function run() {
  const pg = await startRestartablePostgres();
  let throwaway: { dataDir: string; tables: number };
  try {
    await pg.stop();
    await pg.start();
    const { data_directory } = await ask<{ data_directory: string }>(pg.url, 'SHOW data_directory');
    const { tables } = await ask<{ tables: number }>(
      pg.url,
      "SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'",
    );
    throwaway = { dataDir: data_directory, tables };
  } finally {
    await pg.destroy();
  }

  let kept: { dataDir: string; users: number } | undefined;
  if (process.argv[2]) {
    const server = await startLocalPostgres({ dataDir: process.argv[2] });
    try {
      const { data_directory } = await ask<{ data_directory: string }>(server.url, 'SHOW data_directory');
      const { users } = await ask<{ users: number }>(server.url, 'SELECT count(*)::int AS users FROM users');
      kept = { dataDir: data_directory, users };
    } finally {
      await server.stop();
    }
  }
  console.log(JSON.stringify({ throwaway, kept }));
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
