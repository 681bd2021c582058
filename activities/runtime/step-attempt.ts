import { Context } from '@temporalio/activity';
import type { StepId } from '../../contracts/steps';
import type { EventLog } from '../../platform/event-log';
import { metrics } from '../../platform/metrics';
import { openNarration, type Narration } from './narration';
import { startAttempt } from './superseded-attempts';

const HEARTBEAT_EVERY_MS = 2_000;

export interface StepAttempt {
  attempt: number;
  /**
   * Aborted when Temporal cancels the activity (turn cancelled, attempt timed out, heartbeats lost) or
   * when the activity's next attempt starts in this worker (superseded-attempts.ts). Steps pass it to
   * whatever they wait on: the model call, the sandbox, the gates.
   */
  signal: AbortSignal;
  /** The step's narration on the event log, append-only across its attempts (./narration.ts). */
  narration: Narration;
}

/**
 * Runs one attempt of a pipeline step inside its activity:
 * - a retry is announced on the event stream (`step.retry`, once per attempt): an additive signal, since the
 *   step's narration goes on from what its earlier attempts showed (./narration.ts);
 * - the activity heartbeats while the step works, so a dead worker is noticed within the heartbeat
 *   timeout (not the whole start-to-close timeout) and cancellation reaches the step (Temporal delivers
 *   it only to an activity that heartbeats: the workflow's activity options set a heartbeat timeout);
 * - an earlier attempt of the same activity still running in this worker is aborted first;
 * - the attempt is timed and counted (platform/metrics.ts), a retry as such.
 */
export async function runStepAttempt<T>(
  events: EventLog,
  turnId: string,
  step: StepId,
  work: (attempt: StepAttempt) => Promise<T>,
): Promise<T> {
  const ctx = Context.current();
  const { attempt, activityId, workflowExecution } = ctx.info;
  // An activity outside a workflow (none of ours) has no retries of its own to supersede.
  const own = workflowExecution
    ? startAttempt(`${workflowExecution.workflowId}/${workflowExecution.runId}/${activityId}`, attempt)
    : null;
  const signal = own ? AbortSignal.any([ctx.cancellationSignal, own.signal]) : ctx.cancellationSignal;
  let ticker: NodeJS.Timeout | undefined;
  try {
    if (attempt > 1) {
      await events.append(turnId, [
        {
          type: 'step.retry',
          data: { step, attempt, reason: 'previous attempt failed', at: new Date().toISOString() },
          // Keyed by the scheduled activity, so two findings' critic calls retrying in one turn are both announced.
          dedupeKey: `step.retry:${activityId}:${attempt}`,
        },
      ]);
    }
    // A beat at the start, then every HEARTBEAT_EVERY_MS: one RPC per step even when it ends sooner, the price of
    // every step telling the server at once that a worker has it.
    ctx.heartbeat();
    ticker = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    const narration = await openNarration(events, { turnId, step, activity: activityId, attempt });
    return await metrics.timeStepAttempt(step, attempt, signal, () => work({ attempt, signal, narration }));
  } finally {
    clearInterval(ticker);
    own?.end();
  }
}
