/**
 * Postgres and Temporal for a benchmark run, started exactly as the test harness starts them
 * (test/support/global-setup.ts): a throwaway Postgres cluster in a temp dir, migrated, and a headless
 * in-memory Temporal dev server. DATABASE_URL / TEMPORAL_ADDRESS point at existing ones instead.
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
  stop(): Promise<void>;
}

async function startPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-bench-pg-'));
  // Postgres runs as the `postgres` user when we are root; it must be able to enter the directory.
  fs.chmodSync(dataDir, 0o755);
  try {
    const pg = await startLocalPostgres({ dataDir: path.join(dataDir, 'pg'), database: 'amy' });
    return {
      url: pg.url,
      async stop() {
        await pg.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function queryVersion(databaseUrl: string): Promise<string> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string }>('SELECT version()');
    return rows[0].version.split(' on ')[0];
  } finally {
    await client.end();
  }
}

export async function startInfrastructure(): Promise<Infrastructure> {
  const stoppers: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stoppers.reverse()) await s().catch((err) => console.error(err));
  };
  try {
    // The two servers do not depend on each other; starting them together saves seconds per run.
    const [postgres, temporal] = await Promise.allSettled([
      process.env.DATABASE_URL ? null : startPostgres(),
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
      postgresVersion: await queryVersion(databaseUrl),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
