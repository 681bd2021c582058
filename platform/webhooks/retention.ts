/**
 * Retention of the webhook tables (docs/webhooks.md#retention): an event, with its deliveries and their attempts
 * (ON DELETE CASCADE), is kept WEBHOOK_EVENT_RETENTION_DAYS after it was written, long past the three days a
 * delivery is retried, for `webhooks:deliveries` and `webhooks:redeliver`; then it goes, run by the retention
 * schedule. An event with a delivery still pending (a redelivery asked for late) waits for it to end. An event
 * names a user (`user_id` in its payload) and a receiver's answers are kept with its attempts: neither is kept
 * for ever.
 */
import type { Pool } from 'pg';

export const WEBHOOK_EVENT_RETENTION_DAYS = 30;

/** Events per DELETE: a backlog goes in short transactions. */
const PURGE_BATCH_SIZE = 5_000;

/** Deletes the expired events with their deliveries and attempts, batch by batch; returns how many events. */
export async function purgeExpiredWebhookEvents(
  pool: Pick<Pool, 'query'>,
  batchSize = PURGE_BATCH_SIZE,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT e.id FROM webhook_events e
          WHERE e.created_at < now() - make_interval(days => $1)
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
          LIMIT $2)`,
      [WEBHOOK_EVENT_RETENTION_DAYS, batchSize],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) return deleted;
  }
}
