/**
 * Postgres and Temporal for `npm run load`: as bench/infrastructure.ts starts them (a throwaway, migrated
 * Postgres cluster in a temp dir with fsync off; a headless in-memory Temporal dev server; or
 * DATABASE_URL / TEMPORAL_ADDRESS), with one difference: Postgres records commit timestamps
 * (`track_commit_timestamp = on`), so each event's commit time can be read back with
 * `pg_xact_commit_timestamp(xmin)` and event delivery timed from the commit itself.
 *
 * The setting can only be changed with a restart, and scripts/local-postgres.ts passes a fixed set of
 * options, so the cluster is started once, configured with ALTER SYSTEM, and started again. Recording
 * commit timestamps costs each commit a few bytes of SLRU: it does not change what is measured.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startLocalPostgres } from '../scripts/local-postgres';
import { startLocalTemporal } from '../scripts/local-temporal';
import { applyMigrations } from '../scripts/migrate';
import type { Infrastructure } from './infrastructure';

export interface LoadInfrastructure extends Infrastructure {
  /** Whether pg_xact_commit_timestamp works; off on an external DATABASE_URL that does not record them. */
  commitTimestamps: boolean;
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

async function startPostgresWithCommitTimestamps(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-load-pg-'));
  // Postgres runs as the `postgres` user when we are root; it must be able to enter the directory.
  fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'pg');
  try {
    const first = await startLocalPostgres({ dataDir, database: 'amy' });
    try {
      await withClient(first.url, (c) => c.query('ALTER SYSTEM SET track_commit_timestamp = on'));
    } finally {
      await first.stop();
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

export async function startLoadInfrastructure(): Promise<LoadInfrastructure> {
  const stoppers: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stoppers.reverse()) await s().catch((err) => console.error(err));
  };
  try {
    const [postgres, temporal] = await Promise.allSettled([
      process.env.DATABASE_URL ? null : startPostgresWithCommitTimestamps(),
      process.env.TEMPORAL_ADDRESS ? null : startLocalTemporal({ headless: true }),
    ]);
    for (const started of [postgres, temporal]) {
      if (started.status === 'fulfilled' && started.value) stoppers.push(() => started.value!.stop());
    }
    if (postgres.status === 'rejected') throw postgres.reason;
    if (temporal.status === 'rejected') throw temporal.reason;

    const databaseUrl = process.env.DATABASE_URL ?? postgres.value!.url;
    applyMigrations(databaseUrl);
    const { version, commitTimestamps } = await withClient(databaseUrl, async (c) => ({
      version: (await c.query<{ version: string }>('SELECT version()')).rows[0].version.split(' on ')[0],
      commitTimestamps:
        (await c.query<{ track_commit_timestamp: string }>('SHOW track_commit_timestamp')).rows[0]
          .track_commit_timestamp === 'on',
    }));
    return {
      databaseUrl,
      temporalAddress: process.env.TEMPORAL_ADDRESS ?? temporal.value!.address,
      postgresVersion: version,
      commitTimestamps,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
