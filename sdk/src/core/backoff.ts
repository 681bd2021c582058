/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"):
 * attempt n waits a uniformly random time in [0, min(cap, base · 2^(n-1))]. Jitter spreads the
 * reconnections of many clients that lost the same server at the same moment.
 */
export interface BackoffPolicy {
  /** The first retry's upper bound. */
  baseDelayMs: number;
  /** No wait is longer than this. */
  maxDelayMs: number;
}

function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** A server's `Retry-After` wins over our own schedule, but never past the cap. */
export function retryDelay(
  attempt: number,
  policy: BackoffPolicy,
  retryAfterMs: number | undefined,
  random?: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  return backoffDelay(attempt, policy, random);
}
