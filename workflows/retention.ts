/** Started every 15 minutes by the `amy-retention` schedule (worker/retention-schedule.ts). */
import { proxyActivitiesWithSummaries } from './summaries';

const { purgeExpiredTurnEvents } = proxyActivitiesWithSummaries({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

export interface RetentionInput {
  /** The SSE replay window (AMY_REPLAY_WINDOW_SECONDS) when the schedule was created. */
  olderThanSeconds: number;
}

/**
 * Deletes the event logs of turns whose replay window has passed, and Idempotency-Keys past their 24 h;
 * returns how many events went.
 */
export async function RetentionWorkflow({ olderThanSeconds }: RetentionInput): Promise<number> {
  return purgeExpiredTurnEvents({ olderThanSeconds });
}
