/**
 * Request pacing per outside host, shared by every worker of a deployment: NCBI allows 3 requests a second
 * from one address without an API key and 10 with one, and counts them across all our workers, so a limit
 * held in each process would be multiplied by the number of processes.
 *
 * The shared state is one row per host in `tool_rate_slots`: `next_at` is the earliest instant the next
 * request may start. Taking a slot is one atomic statement that moves `next_at` on by one interval and
 * returns how long the caller must wait for the slot it reserved, so concurrent workers queue up in
 * distinct slots without a lock held across the wait. Time is Postgres's clock, the one clock every
 * worker shares. A reserved slot that goes unused (its caller gave up) is simply lost: the limiter errs on
 * the slow side.
 */
import type { Pool } from 'pg';

/** NCBI E-utilities' published limits, in requests per second per address. */
const NCBI_REQUESTS_PER_SECOND = { withoutApiKey: 3, withApiKey: 10 } as const;

/** The spacing between two requests to NCBI, rounded up so that the limit is never exceeded. */
export function ncbiRequestIntervalMs(hasApiKey: boolean): number {
  const perSecond = hasApiKey ? NCBI_REQUESTS_PER_SECOND.withApiKey : NCBI_REQUESTS_PER_SECOND.withoutApiKey;
  return Math.ceil(1000 / perSecond);
}

export interface RateLimiter {
  /**
   * Reserves the host's next request slot and waits for it. Throws RateLimitBacklogError, at once and
   * without waiting, when the slot is more than `maxWaitMs` away: the queue is longer than a tool call
   * should wait.
   */
  acquire(host: string, options: { intervalMs: number; maxWaitMs: number }): Promise<void>;
}

export class RateLimitBacklogError extends Error {
  override name = 'RateLimitBacklogError';

  constructor(readonly waitMs: number) {
    super(`the next request slot is ${Math.ceil(waitMs)} ms away`);
  }
}

/** Reserves the next slot and says how many milliseconds until it starts (0: now). */
type ReserveSlot = (host: string, intervalMs: number) => Promise<number>;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function limiterOver(reserve: ReserveSlot, sleep: (ms: number) => Promise<void>): RateLimiter {
  return {
    async acquire(host, { intervalMs, maxWaitMs }) {
      if (!(intervalMs > 0)) throw new RangeError('intervalMs must be positive');
      const waitMs = await reserve(host, Math.ceil(intervalMs));
      if (waitMs > maxWaitMs) throw new RateLimitBacklogError(waitMs);
      if (waitMs > 0) await sleep(waitMs);
    },
  };
}

/**
 * One statement, so that concurrent callers serialise on the host's row: the slot reserved starts at the
 * later of `next_at` and now, and `next_at` moves to one interval after it. `clock_timestamp()` is read
 * once (a CTE with a volatile function is evaluated once), not at the start of the transaction, so a
 * caller that waited for the row lock is not given a slot in its past.
 */
export const RESERVE_RATE_SLOT_SQL = `
WITH clock AS (SELECT clock_timestamp() AS now),
slot AS (
  INSERT INTO tool_rate_slots (host, next_at)
  SELECT $1, clock.now + $2::int * interval '1 millisecond' FROM clock
  ON CONFLICT (host) DO UPDATE
    SET next_at = GREATEST(tool_rate_slots.next_at + $2::int * interval '1 millisecond', EXCLUDED.next_at)
  RETURNING next_at
)
SELECT GREATEST(0, EXTRACT(EPOCH FROM (slot.next_at - clock.now)) * 1000 - $2::int)::float8 AS wait_ms
FROM slot, clock`;

/** The limiter a deployment shares, in `tool_rate_slots`. */
export function createPgRateLimiter(
  pool: Pick<Pool, 'query'>,
  sleep: (ms: number) => Promise<void> = sleepFor,
): RateLimiter {
  return limiterOver(async (host, intervalMs) => {
    const { rows } = await pool.query<{ wait_ms: number }>(RESERVE_RATE_SLOT_SQL, [host, intervalMs]);
    return rows[0].wait_ms;
  }, sleep);
}

/** The same pacing in one process's memory, for tests and single-process tooling. */
export function createMemoryRateLimiter(
  options: { now?: () => number; sleep?: (ms: number) => Promise<void> } = {},
): RateLimiter {
  const now = options.now ?? Date.now;
  const nextAt = new Map<string, number>();
  return limiterOver(async (host, intervalMs) => {
    const at = now();
    const slot = Math.max(nextAt.get(host) ?? at, at);
    nextAt.set(host, slot + intervalMs);
    return slot - at;
  }, options.sleep ?? sleepFor);
}
