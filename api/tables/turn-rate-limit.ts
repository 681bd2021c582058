/**
 * The per-user limit on turn creation: at most AMY_MAX_TURNS_PER_MINUTE turns created in any 60 s. The
 * in-flight cap bounds how many turns run at once; this bounds how fast a user can churn through them
 * (each costs model calls even when cancelled at once). It counts the user's own turn rows, under the
 * user's row lock that turn creation holds, so it is exact across any number of API processes and needs
 * no table of its own; a turn discarded because its workflow never started does not count. The count's SQL
 * is create_queued_turn's (prisma/migrations/20261213100000_create_queued_turn_function), its only copy.
 */
import { ApiError } from '../errors';

/** The window, in seconds: create_queued_turn's `p_window_seconds`, and this module's message. */
export const TURN_RATE_WINDOW_SECONDS = 60;

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
