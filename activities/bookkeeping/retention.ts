/**
 * Retention: a turn's event log exists for SSE replay, which ends AMY_REPLAY_WINDOW_SECONDS after the
 * turn completes (the stream then answers turn_events_expired). Past that the rows are dead weight, so
 * they are deleted; the turns themselves, with their results, are kept forever. So are Idempotency-Keys
 * past their 24 h, which no request can use any more, and webhook events past their 30 days
 * (platform/webhooks/retention.ts).
 */
import { Context, log } from '@temporalio/activity';
import { IDEMPOTENCY_KEY_TTL_HOURS } from '../../contracts/idempotency';
import { purgeExpiredWebhookEvents } from '../../platform/webhooks/retention';
import type { StepDeps } from '../runtime/step-deps';

export interface PurgeExpiredTurnEventsInput {
  /** Events of turns that completed longer ago than this are deleted. */
  olderThanSeconds: number;
}

/** Rows per DELETE: a large backlog is cleared in short transactions instead of one long lock-holding one. */
const PURGE_BATCH_SIZE = 10_000;

export function createPurgeExpiredTurnEvents({ pool }: Pick<StepDeps, 'pool'>, batchSize = PURGE_BATCH_SIZE) {
  /**
   * Deletes the expired events batch by batch, then the expired Idempotency-Keys; returns how many
   * events went. Running turns are never touched.
   */
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
    // One statement: a run every 15 minutes finds only the keys that expired since the last one.
    const keys = await pool.query(
      'DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)',
      [IDEMPOTENCY_KEY_TTL_HOURS],
    );
    const webhookEvents = await purgeExpiredWebhookEvents(pool);
    log.info('purged expired turn events, idempotency keys and webhook events', {
      deleted,
      olderThanSeconds,
      idempotencyKeysDeleted: keys.rowCount ?? 0,
      webhookEventsDeleted: webhookEvents,
    });
    return deleted;
  };
}
