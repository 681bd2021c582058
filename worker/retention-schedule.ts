import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { RetentionWorkflow } from '../workflows';
import { RETENTION_WORKFLOW_ID } from '../platform/temporal/service-workflows';

export const RETENTION_SCHEDULE_ID = 'amy-retention';
const RETENTION_INTERVAL = '15 minutes';

/**
 * Makes sure the schedule that purges expired event logs exists; every worker calls this at start, so
 * it is a no-op when another worker created it first. An existing schedule is left as it is: after
 * changing AMY_REPLAY_WINDOW_SECONDS, delete `amy-retention` so the next worker start recreates it.
 */
export async function ensureRetentionSchedule(
  client: Client,
  opts: { taskQueue: string; replayWindowSeconds: number },
): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: RETENTION_SCHEDULE_ID,
      spec: { intervals: [{ every: RETENTION_INTERVAL }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'RetentionWorkflow',
        workflowId: RETENTION_WORKFLOW_ID,
        taskQueue: opts.taskQueue,
        args: [{ olderThanSeconds: opts.replayWindowSeconds }] satisfies Parameters<typeof RetentionWorkflow>,
      },
      // A purge still running when the next one is due makes the next one pointless.
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
