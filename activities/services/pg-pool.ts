import { Pool } from 'pg';

/**
 * A pg pool that survives Postgres going away: an idle client's connection error (a restart, a
 * failover) is reported instead of crashing the process; the next query simply reconnects.
 */
export function createPgPool(
  databaseUrl: string,
  max: number,
  onIdleError: (err: Error) => void = (err) => console.error(`[pg] idle connection lost: ${err.message}`),
): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max });
  pool.on('error', onIdleError);
  return pool;
}
