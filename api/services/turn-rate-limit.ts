/**
 * The per-user limit on turn creation: at most AMY_MAX_TURNS_PER_MINUTE turns created in any 60 s. The
 * in-flight cap bounds how many turns run at once; this bounds how fast a user can churn through them
 * (each costs model calls even when cancelled at once). It counts the user's own turn rows, under the
 * user's row lock that createQueuedTurn holds, so it is exact across any number of API processes and
 * needs no table of its own; a turn discarded because its workflow never started does not count.
 */
import type { PoolClient } from 'pg';
import { ApiError } from '../errors';

const WINDOW_SECONDS = 60;

/** Throws `429 rate_limited`, with Retry-After until the oldest turn counted leaves the window, at the limit. */
export async function assertUnderTurnRateLimit(client: PoolClient, userId: string, maxPerMinute: number) {
  // The maxPerMinute-th newest turn of the window, if there is one: the limit is reached, and a slot
  // frees when that turn is WINDOW_SECONDS old.
  const { rows } = await client.query<{ retry_after: number }>(
    `SELECT ceil(extract(epoch FROM created_at + make_interval(secs => $2) - now()))::int AS retry_after
     FROM turns WHERE user_id = $1 AND created_at > now() - make_interval(secs => $2)
     ORDER BY created_at DESC OFFSET $3 LIMIT 1`,
    [userId, WINDOW_SECONDS, maxPerMinute - 1],
  );
  if (rows.length === 0) return;
  const retryAfter = Math.max(1, rows[0].retry_after);
  throw new ApiError(
    'rate_limited',
    `You created ${maxPerMinute} turns in the last ${WINDOW_SECONDS} s, the most allowed; try again in ${retryAfter} s.`,
    undefined,
    { 'Retry-After': String(retryAfter) },
  );
}
