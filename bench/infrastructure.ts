/**
 * Postgres and Temporal for a benchmark run, started exactly as the test harness starts them
 * (test/support/global-setup.ts): a throwaway Postgres cluster in a temp dir, migrated, and a headless
 * in-memory Temporal dev server. DATABASE_URL / TEMPORAL_ADDRESS point at existing ones instead.
 *
 * `npm run load` asks for Postgres to record commit timestamps (`track_commit_timestamp = on`), so each
 * event's commit time can be read back with `pg_xact_commit_timestamp(xmin)` and event delivery timed
 * from the commit itself. The setting needs a restart, and scripts/local-postgres.ts passes a fixed set
 * of options, so that cluster is started once, configured with ALTER SYSTEM, and started again.
 * Recording commit timestamps costs each commit a few bytes of SLRU: it does not change what is measured.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startLocalPostgres } from '../scripts/local-postgres';
import { startLocalTemporal } from '../scripts/local-temporal';
import { applyMigrations } from '../scripts/migrate';

export interface Infrastructure {
  databaseUrl: string;
  temporalAddress: string;
  /** `SELECT version()`, for the report: Postgres settings differ a lot between installs. */
  postgresVersion: string;
  /** Whether pg_xact_commit_timestamp works; off unless asked for, or on a DATABASE_URL that does not record them. */
  commitTimestamps: boolean;
  stop(): Promise<void>;
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function startPostgres(commitTimestamps: boolean): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-bench-pg-'));
  // Postgres runs as the `postgres` user when we are root; it must be able to enter the directory.
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'pg');
  try {
    if (commitTimestamps) {
      const first = await startLocalPostgres({ dataDir, database: 'amy' });
      try {
        await withClient(first.url, (c) => c.query('ALTER SYSTEM SET track_commit_timestamp = on'));
      } finally {
        await first.stop();
      }
    }
    const pg = await startLocalPostgres({ dataDir, database: 'amy' });
    return {
      url: pg.url,
      async stop() {
        await pg.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export async function startInfrastructure(opts: { commitTimestamps?: boolean } = {}): Promise<Infrastructure> {
  const stoppers: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stoppers.reverse()) await s().catch((err) => console.error(err));
  };
  try {
    // The two servers do not depend on each other; starting them together saves seconds per run.
    const [postgres, temporal] = await Promise.allSettled([
      process.env.DATABASE_URL ? null : startPostgres(opts.commitTimestamps ?? false),
      process.env.TEMPORAL_ADDRESS ? null : startLocalTemporal({ headless: true }),
    ]);
    for (const started of [postgres, temporal]) {
      if (started.status === 'fulfilled' && started.value) stoppers.push(() => started.value!.stop());
    }
    if (postgres.status === 'rejected') throw postgres.reason;
    if (temporal.status === 'rejected') throw temporal.reason;

    const databaseUrl = process.env.DATABASE_URL ?? postgres.value!.url;
    applyMigrations(databaseUrl);
    return {
      databaseUrl,
      temporalAddress: process.env.TEMPORAL_ADDRESS ?? temporal.value!.address,
      ...(await withClient(databaseUrl, async (c) => ({
        postgresVersion: (await c.query<{ version: string }>('SELECT version()')).rows[0].version.split(' on ')[0],
        commitTimestamps:
          (await c.query<{ track_commit_timestamp: string }>('SHOW track_commit_timestamp')).rows[0]
            .track_commit_timestamp === 'on',
      }))),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
