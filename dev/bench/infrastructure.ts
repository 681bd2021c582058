/**
 * Postgres and Temporal for a benchmark run, started as the test harness starts them (see
 * dev/stack/local-services.ts): a throwaway Postgres cluster in a temp dir, migrated, and a headless
 * in-memory Temporal dev server. DATABASE_URL / TEMPORAL_ADDRESS point at existing ones instead.
 *
 * `npm run load` asks for Postgres to record commit timestamps (`track_commit_timestamp = on`), so each
 * event's commit time can be read back with `pg_xact_commit_timestamp(xmin)` and event delivery timed
 * from the commit itself. Recording commit timestamps costs each commit a few bytes of SLRU: it does
 * not change what is measured.
 */
import { Client } from 'pg';
import { startLocalServices } from '../stack/local-services';
import { applyMigrations } from '../../scripts/migrate';

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

export async function startInfrastructure(opts: { commitTimestamps?: boolean } = {}): Promise<Infrastructure> {
  const services = await startLocalServices({
    postgres: {
      tempDirPrefix: 'amy-bench-pg-',
      settings: opts.commitTimestamps ? { track_commit_timestamp: 'on' } : {},
    },
    temporal: { headless: true },
  });
  try {
    const { databaseUrl, temporalAddress } = services;
    applyMigrations(databaseUrl);
    return {
      databaseUrl,
      temporalAddress,
      ...(await withClient(databaseUrl, async (c) => ({
        postgresVersion: (await c.query<{ version: string }>('SELECT version()')).rows[0].version.split(' on ')[0],
        commitTimestamps:
          (await c.query<{ track_commit_timestamp: string }>('SHOW track_commit_timestamp')).rows[0]
            .track_commit_timestamp === 'on',
      }))),
      stop: services.stop,
    };
  } catch (err) {
    await services.stop();
    throw err;
  }
}
