/**
 * Database access: runtime code (the API, the worker's activities, platform/) reads and writes Postgres
 * through `pg` only, with its SQL in small named functions per table that take a `Pool`: in platform/ when
 * the API and the worker share the table (users.ts, memory.ts, event-log.ts, health-data/, llm.ts), else
 * beside its one user (the API's services/, the worker's turn bookkeeping in activities/steps/). Statements
 * that must commit together run inside `inTransaction` below. One driver gives one pool per process, one
 * set of type conversions, and every query the service runs in plain SQL. Prisma is the schema and
 * migration tool only (prisma/schema.prisma, `prisma migrate deploy`): nothing at run time imports its
 * client. Instants are `timestamptz` columns, which node-pg reads back as the same `Date` whatever the
 * process's or the session's time zone. Calendar days are `date` columns, passed and read as `YYYY-MM-DD`
 * text (`to_char`), never as `Date`s, which node-pg would place at local midnight.
 */
import { Pool, type PoolClient } from 'pg';

/**
 * A pg pool that survives Postgres going away (a restart, a failover) without crashing the process:
 * - an idle client's connection error is reported through `onIdleError`; the next query reconnects;
 * - a checked-out client (a transaction in progress, e.g. an event append waiting on the turn's row
 *   lock) gets no listener from the pool. When the server terminates its session, the query in flight
 *   rejects and then the client emits 'error' ("Connection terminated unexpectedly") before the caller
 *   has released it; unheard, that 'error' is thrown and kills the process. Every client therefore
 *   carries a listener of its own. The failure is already reported by the rejected query, and
 *   `release()` discards a client whose connection broke.
 */
export function createPgPool(
  databaseUrl: string,
  max: number,
  onIdleError: (err: Error) => void = (err) => console.error(`[pg] idle connection lost: ${err.message}`),
): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max });
  pool.on('error', onIdleError);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs `work` in one transaction on a client of its own: committed if it resolves, rolled back if not. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
