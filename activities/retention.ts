/**
 * Retention: a turn's event log exists for SSE replay, which ends AMY_REPLAY_WINDOW_SECONDS after the
 * turn completes (the stream then answers turn_events_expired). Past that the rows are dead weight, so
 * they are deleted; the turns themselves, with their results, are kept forever.
 */
import { Context, log } from '@temporalio/activity';
import type { StepDeps } from './step-deps';

export interface PurgeExpiredTurnEventsInput {
  /** Events of turns that completed longer ago than this are deleted. */
  olderThanSeconds: number;
}

/** Rows per DELETE: a large backlog is cleared in short transactions instead of one long lock-holding one. */
export const PURGE_BATCH_SIZE = 10_000;

export function createPurgeExpiredTurnEvents({ pool }: Pick<StepDeps, 'pool'>, batchSize = PURGE_BATCH_SIZE) {
  /** Deletes the expired events batch by batch; returns how many rows went. Running turns are never touched. */
  return async function purgeExpiredTurnEvents({ olderThanSeconds }: PurgeExpiredTurnEventsInput): Promise<number> {
    let deleted = 0;
    for (;;) {
      const res = await pool.query(
        `DELETE FROM turn_events e
           USING (
             SELECT ev.turn_id, ev.id
               FROM turn_events ev
               JOIN turns ON turns.id = ev.turn_id
              WHERE turns.completed_at < now() - make_interval(secs => $1)
              LIMIT $2
           ) expired
         WHERE e.turn_id = expired.turn_id AND e.id = expired.id`,
        [olderThanSeconds, batchSize],
      );
      const batch = res.rowCount ?? 0;
      deleted += batch;
      // Between batches, so a cancelled or timed-out purge stops at a batch boundary.
      Context.current().heartbeat(deleted);
      if (batch < batchSize) break;
    }
    log.info('purged expired turn events', { deleted, olderThanSeconds });
    return deleted;
  };
}
