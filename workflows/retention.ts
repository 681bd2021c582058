/** Started every 15 minutes by the `amy-retention` schedule (worker/retention-schedule.ts). */
import { patched } from '@temporalio/workflow';
import { proxyActivitiesWithSummaries } from './summaries';

const { purgeExpiredTurnEvents, reconcileAbandonedTurns } = proxyActivitiesWithSummaries(
  {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
  },
  ['purgeExpiredTurnEvents', 'reconcileAbandonedTurns'],
);

/** Far longer than starting a workflow takes, far shorter than a user's slot should stay taken. */
const DEFAULT_ABANDONED_AFTER_SECONDS = 300;

export interface RetentionInput {
  /** The SSE replay window (AMY_REPLAY_WINDOW_SECONDS) when the schedule was created. */
  olderThanSeconds: number;
  /**
   * Turns still in flight this long after creation are checked against their workflow (absent from
   * schedules created before the reconciler: the default applies).
   */
  abandonedAfterSeconds?: number;
}

/**
 * Deletes the event logs of turns whose replay window has passed, and Idempotency-Keys past their 24 h;
 * then fails the turns whose workflow closed without ending them. Returns how many events went.
 */
export async function RetentionWorkflow({ olderThanSeconds, abandonedAfterSeconds }: RetentionInput): Promise<number> {
  const deleted = await purgeExpiredTurnEvents({ olderThanSeconds });
  // A run that began before the reconciler was deployed replays without it.
  if (patched('reconcile-abandoned-turns')) {
    await reconcileAbandonedTurns({ abandonedAfterSeconds: abandonedAfterSeconds ?? DEFAULT_ABANDONED_AFTER_SECONDS });
  }
  return deleted;
}
