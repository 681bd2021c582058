import { Context } from '@temporalio/activity';
import type { StepId } from '../../contracts/steps';
import type { EventLog } from '../../platform/event-log';

const HEARTBEAT_EVERY_MS = 2_000;

export interface StepAttempt {
  attempt: number;
  /** Aborted when Temporal cancels the activity (turn cancelled, or heartbeats lost). */
  signal: AbortSignal;
}

/**
 * Runs one attempt of a pipeline step inside its activity:
 * - a retry is announced on the event stream (`step.retry`, once per attempt), which tells clients
 *   that token deltas from earlier attempts of this step are void;
 * - the activity heartbeats while the step works, so a dead worker is noticed within the heartbeat
 *   timeout (not the whole start-to-close timeout) and cancellation reaches the step.
 */
export async function runStepAttempt<T>(
  events: EventLog,
  turnId: string,
  step: StepId,
  work: (attempt: StepAttempt) => Promise<T>,
): Promise<T> {
  const ctx = Context.current();
  const { attempt } = ctx.info;
  if (attempt > 1) {
    await events.append(turnId, [
      {
        type: 'step.retry',
        data: { step, attempt, reason: 'previous attempt failed', at: new Date().toISOString() },
        // Keyed by the scheduled activity, so two findings' critic calls retrying in one turn are both announced.
        dedupeKey: `step.retry:${ctx.info.activityId}:${attempt}`,
      },
    ]);
  }
  ctx.heartbeat();
  const ticker = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work({ attempt, signal: ctx.cancellationSignal });
  } finally {
    clearInterval(ticker);
  }
}
