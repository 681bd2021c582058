/**
 * When a webhook delivery tries again (docs/webhooks.md#retries): the first retry `firstRetrySeconds` after the
 * first failure, then twice as long each time, capped at `maxIntervalSeconds` between attempts, each delay
 * jittered by ±20 % so that the deliveries a receiver's outage failed together do not all come back at once;
 * a receiver's `Retry-After` is honoured when it asks for longer. Past `giveUpAfterSeconds` after the first
 * attempt no attempt is made: the delivery fails. Pure and deterministic given `random` (the workflow's seeded
 * Math.random), so workflow code can use it.
 */

export interface RetrySchedule {
  firstRetrySeconds: number;
  maxIntervalSeconds: number;
  giveUpAfterSeconds: number;
}

export const WEBHOOK_RETRY_SCHEDULE: RetrySchedule = {
  firstRetrySeconds: 5,
  maxIntervalSeconds: 60 * 60,
  giveUpAfterSeconds: 3 * 24 * 60 * 60,
};

const JITTER = 0.2;

/** The wait after the `failures`-th failed attempt (1 for the first), in milliseconds. */
export function retryDelayMs(
  schedule: RetrySchedule,
  failures: number,
  retryAfterSeconds: number | null,
  random: number,
): number {
  const base = Math.min(schedule.firstRetrySeconds * 2 ** (failures - 1), schedule.maxIntervalSeconds);
  const jittered = Math.min(base * (1 - JITTER + 2 * JITTER * random), schedule.maxIntervalSeconds);
  const delaySeconds = Math.max(jittered, retryAfterSeconds ?? 0);
  return Math.round(delaySeconds * 1000);
}

/** How long to wait for one of the endpoint's busy slots before asking again: short, and not an attempt. */
export function busyDelayMs(random: number): number {
  return Math.round(1000 * (1 + random));
}
