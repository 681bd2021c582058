import { Client } from 'pg';
import { createDb, type Db } from '../../platform/db';
import { readTestEnv, TEMPLATE_DB } from './test-env';

export interface TestDatabase {
  url: string;
  db: Db;
  drop(): Promise<void>;
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
  const db = createDb(url.toString());
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.$disconnect();
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
  const db = createDb(url);
  return {
    url,
    db,
    async drop() {
      await db.$disconnect();
    },
  };
}
