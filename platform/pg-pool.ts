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
