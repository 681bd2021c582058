import { Context } from '@temporalio/activity';
import type { EventLog } from './services/event-log';

/**
 * The current activity attempt, announcing retries on the event stream: a `step.retry` event (once
 * per attempt) tells clients that deltas from earlier attempts of this step are void.
 */
export async function beginStepAttempt(events: EventLog, turnId: string, step: string): Promise<number> {
  const { attempt } = Context.current().info;
  if (attempt > 1) {
    await events.append(turnId, [
      {
        type: 'step.retry',
        data: { step, attempt, reason: 'previous attempt failed', at: new Date().toISOString() },
        dedupeKey: `step.retry:${step}:${attempt}`,
      },
    ]);
  }
  return attempt;
}
