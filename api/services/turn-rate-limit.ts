/**
 * The per-user limit on turn creation: at most AMY_MAX_TURNS_PER_MINUTE turns created in any 60 s. The
 * in-flight cap bounds how many turns run at once; this bounds how fast a user can churn through them
 * (each costs model calls even when cancelled at once). It counts the user's own turn rows, under the
 * user's row lock that createQueuedTurn holds, so it is exact across any number of API processes and
 * needs no table of its own; a turn discarded because its workflow never started does not count.
 */
import { ApiError } from '../errors';

/** The window, in seconds: `$2` of the subquery below. */
export const TURN_RATE_WINDOW_SECONDS = 60;

/**
 * A scalar subquery, for the statement of turn creation's checks (./turns.ts): with `$1` the user, `$2` the
 * window in seconds and `$3` the limit minus one, the maxPerMinute-th newest turn of the window, if there is
 * one, as the seconds until it leaves the window (the limit is reached, and a slot frees then); else null.
 */
export const TURN_RATE_RETRY_AFTER_SQL = `SELECT ceil(extract(epoch FROM created_at + make_interval(secs => $2) - now()))::int
     FROM turns WHERE user_id = $1 AND created_at > now() - make_interval(secs => $2)
     ORDER BY created_at DESC OFFSET $3 LIMIT 1`;

/** Throws `429 rate_limited` when the limit is reached (`retryAfter` not null), with its Retry-After. */
export function refuseOverTurnRateLimit(retryAfterSeconds: number | null, maxPerMinute: number): void {
  if (retryAfterSeconds === null) return;
  const retryAfter = Math.max(1, retryAfterSeconds);
  throw new ApiError(
    'rate_limited',
    `You created ${maxPerMinute} turns in the last ${TURN_RATE_WINDOW_SECONDS} s, the most allowed; try again in ${retryAfter} s.`,
    undefined,
    { 'Retry-After': String(retryAfter) },
  );
}
