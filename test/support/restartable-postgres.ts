/**
 * A Postgres cluster of one suite's own, migrated, that the suite may stop and start again on the same
 * data directory and port. The cluster from the global setup is shared by every suite and must never
 * be restarted; this one is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { startLocalPostgres, throwawayClusterDir, type LocalPostgres } from '../../dev/stack/local-postgres';
import { freePort } from '../../dev/stack/ports';

const migrationsDir = path.resolve(__dirname, '..', '..', 'prisma', 'migrations');

export interface RestartablePostgres {
  /** The migrated database; the same URL before and after a restart. */
  url: string;
  /** A "fast" shutdown: every session is terminated, open transactions are rolled back. */
  stop(): Promise<void>;
  /** Starts the cluster again on the same data directory and port. */
  start(): Promise<void>;
  /** Stops the cluster and deletes its files. */
  destroy(): Promise<void>;
}

/**
 * Runs every migration's SQL in order, as `prisma migrate deploy` would, minus Prisma's bookkeeping
 * table that nothing in the service reads. The Prisma CLI takes 10-20 s on a busy machine; this takes
 * milliseconds. (The global setup migrates the shared template with the CLI itself.)
 */
async function applyMigrationSql(url: string) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const migrations = fs
      .readdirSync(migrationsDir)
      .filter((name) => fs.existsSync(path.join(migrationsDir, name, 'migration.sql')))
      .sort();
    for (const name of migrations)
      await client.query(fs.readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8'));
  } finally {
    await client.end();
  }
}

export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const { dataDir, remove } = throwawayClusterDir('amy-test-pg-restart-');
  const port = await freePort();
  const start = () => startLocalPostgres({ dataDir, port, database: 'amy' });
  let server: LocalPostgres | null = await start();
  const url = server.url;
  await applyMigrationSql(url);
  return {
    url,
    async stop() {
      await server?.stop();
      server = null;
    },
    async start() {
      server ??= await start();
    },
    async destroy() {
      await server?.stop();
      server = null;
      remove();
    },
  };
}
