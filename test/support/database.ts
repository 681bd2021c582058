import { PrismaPg } from '@prisma/adapter-pg';
import { Client, type Pool } from 'pg';
import { PrismaClient } from '../../generated/prisma/client';
import { createPgPool } from '../../platform/pg-pool';
import { readTestEnv, TEMPLATE_DB } from './test-env';

export interface TestDatabase {
  url: string;
  /** What the service's own functions take (platform/, the API's services): fixtures go through it. */
  pool: Pool;
  /**
   * The generated Prisma client, for tests only: suites read tables through it in assertions. Nothing
   * the service runs imports it (docs/operations.md, "Database access").
   */
  db: PrismaClient;
  drop(): Promise<void>;
}

function connect(url: string): Pick<TestDatabase, 'pool' | 'db'> & { disconnect(): Promise<void> } {
  // A suite that restarts Postgres drops idle connections on purpose; the next query reconnects.
  const pool = createPgPool(url, 5, () => undefined);
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 5 }) });
  return {
    pool,
    db,
    async disconnect() {
      await Promise.all([pool.end(), db.$disconnect()]);
    },
  };
}

/** A fresh, migrated database for one suite, cloned from the template the global setup prepared. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { adminUrl } = readTestEnv();
  const name = `amy_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const { pool, db, disconnect } = connect(url.toString());
  return {
    url: url.toString(),
    pool,
    db,
    async drop() {
      await disconnect();
      const a = new Client({ connectionString: adminUrl });
      await a.connect();
      // No FORCE: terminating a connection some pool still holds would surface as an unhandled
      // error in whichever suite runs next. A database still in use is left to the throwaway cluster.
      await a.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
      await a.end();
    },
  };
}

/**
 * A database the suite provides itself (e.g. on a cluster of its own that it restarts), already
 * migrated; `drop()` only disconnects, since the suite owns its lifetime.
 */
export function openTestDatabase(url: string): TestDatabase {
  const { pool, db, disconnect } = connect(url);
  return { url, pool, db, drop: disconnect };
}
