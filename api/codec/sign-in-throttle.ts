/**
 * The codec server's sign-in throttle (docs/operations.md#the-codec-server). An operator token is a password:
 * every wrong one presented, on the sign-in form or as a Bearer token, is a row of `codec_sign_in_failures`,
 * counted across API processes over a sliding window, per client address and overall. Past either limit, an
 * attempt is refused (429 `rate_limited`, with Retry-After) before its token is looked at, a right one too,
 * until enough failures have left the window. The overall limit bounds guessing from many addresses, at the
 * price that such a flood also holds back operators signing in; a session already open is never throttled
 * (its random id is not something one guesses).
 */
import type { Pool } from 'pg';

export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** Wrong tokens from one client address within the window before its attempts are refused. */
export const MAX_SIGN_IN_FAILURES_PER_ADDRESS = 10;
/** Wrong tokens from all addresses together within the window before every attempt is refused. */
export const MAX_SIGN_IN_FAILURES_OVERALL = 50;

/**
 * Whether an attempt from this address is refused now, and for how long: until the failure that reached a
 * limit (the limit-th newest in the window) leaves the window, the longer of the two limits' waits.
 */
export async function signInRefusal(pool: Pool, clientAddress: string): Promise<{ retryAfterSeconds: number } | null> {
  const { rows } = await pool.query<{ address_wait: number | null; overall_wait: number | null }>(
    `WITH recent AS (
       SELECT client_address, failed_at FROM codec_sign_in_failures
        WHERE failed_at > now() - make_interval(secs => $2)
     )
     SELECT
       (SELECT ceil(extract(epoch FROM failed_at + make_interval(secs => $2) - now()))::int
          FROM recent WHERE client_address = $1 ORDER BY failed_at DESC OFFSET $3 - 1 LIMIT 1) AS address_wait,
       (SELECT ceil(extract(epoch FROM failed_at + make_interval(secs => $2) - now()))::int
          FROM recent ORDER BY failed_at DESC OFFSET $4 - 1 LIMIT 1) AS overall_wait`,
    [clientAddress, SIGN_IN_WINDOW_SECONDS, MAX_SIGN_IN_FAILURES_PER_ADDRESS, MAX_SIGN_IN_FAILURES_OVERALL],
  );
  const waits = [rows[0].address_wait, rows[0].overall_wait].filter((w): w is number => w !== null);
  return waits.length === 0 ? null : { retryAfterSeconds: Math.max(1, ...waits) };
}

export async function recordSignInFailure(pool: Pool, clientAddress: string): Promise<void> {
  await pool.query('INSERT INTO codec_sign_in_failures (client_address) VALUES ($1)', [clientAddress]);
}

/** Deletes the failures that have left the window; returns how many. */
export async function forgetPastSignInFailures(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(
    'DELETE FROM codec_sign_in_failures WHERE failed_at <= now() - make_interval(secs => $1)',
    [SIGN_IN_WINDOW_SECONDS],
  );
  return rowCount ?? 0;
}
