/**
 * Webhook deliveries and their attempts (docs/webhooks.md#delivery): what the dispatcher makes of the outbox, what
 * each attempt records, and what `npm run webhooks:deliveries` lists.
 *
 * An attempt's row is written when it starts and completed when it ends, so the attempts in flight are rows:
 * an endpoint takes at most `concurrency` of them at once (counted under a per-endpoint lock), and an attempt that
 * a dead worker left unfinished is closed as `interrupted` by its delivery's next attempt, and stops counting
 * after IN_FLIGHT_STALE_SECONDS in any case (an attempt lasts 10 s at most).
 */
import type { Pool } from 'pg';
import type { WebhookEventType } from '../../contracts/webhooks';
import { newId } from '../ids';
import { inTransaction } from '../pg-pool';

const IN_FLIGHT_STALE_SECONDS = 60;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'disabled';

export class UnknownWebhookDeliveryError extends Error {
  override name = 'UnknownWebhookDeliveryError';
}

/** A redelivery that cannot be made now: its endpoint is disabled, or the event is still being delivered there. */
export class WebhookRedeliveryRefusedError extends Error {
  override name = 'WebhookRedeliveryRefusedError';
}

/** The Temporal workflow id of a delivery: one per (event, endpoint, sequence), so a second start is refused. */
export const deliveryWorkflowId = (d: { eventId: string; endpointId: string; sequence: number }) =>
  `webhook:${d.eventId}:${d.endpointId}${d.sequence === 0 ? '' : `:${d.sequence}`}`;

/**
 * Makes one delivery per (undispatched event, enabled endpoint subscribed to its type) and marks the events
 * dispatched, in one transaction; events locked by another dispatcher are left to it. Returns how many events.
 */
export async function fanOutWebhookEvents(pool: Pool, batch = 100): Promise<number> {
  return inTransaction(pool, async (client) => {
    const { rows: events } = await client.query<{ id: string; type: WebhookEventType }>(
      `SELECT id, type FROM webhook_events WHERE dispatched_at IS NULL
       ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [batch],
    );
    if (events.length === 0) return 0;
    const { rows: endpoints } = await client.query<{ id: string; event_types: string[] }>(
      'SELECT id, event_types FROM webhook_endpoints WHERE disabled_at IS NULL',
    );
    const pairs = events.flatMap((event) =>
      endpoints.filter((e) => e.event_types.includes(event.type)).map((e) => ({ event: event.id, endpoint: e.id })),
    );
    if (pairs.length > 0) {
      await client.query(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
         ON CONFLICT (event_id, endpoint_id, sequence) DO NOTHING`,
        [pairs.map(() => newId('webhookDelivery')), pairs.map((p) => p.event), pairs.map((p) => p.endpoint)],
      );
    }
    await client.query('UPDATE webhook_events SET dispatched_at = now() WHERE id = ANY($1::text[])', [
      events.map((e) => e.id),
    ]);
    return events.length;
  });
}

export interface UnstartedDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  sequence: number;
}

/** Pending deliveries whose workflow has not been started yet, oldest first. */
export async function unstartedDeliveries(pool: Pool, limit = 100): Promise<UnstartedDelivery[]> {
  const { rows } = await pool.query<UnstartedDelivery>(
    `SELECT id, event_id AS "eventId", endpoint_id AS "endpointId", sequence FROM webhook_deliveries
     WHERE workflow_started_at IS NULL AND status = 'pending' ORDER BY created_at, id LIMIT $1`,
    [limit],
  );
  return rows;
}

export async function markDeliveryStarted(pool: Pool, deliveryId: string): Promise<void> {
  await pool.query(
    'UPDATE webhook_deliveries SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL',
    [deliveryId],
  );
}

export interface DeliveryForAttempt {
  status: DeliveryStatus;
  endpointId: string;
  eventId: string;
  /** The body as sent, byte for byte on every attempt (the signature covers it). */
  body: string;
}

export async function deliveryForAttempt(pool: Pool, deliveryId: string): Promise<DeliveryForAttempt | null> {
  const { rows } = await pool.query<DeliveryForAttempt>(
    `SELECT d.status, d.endpoint_id AS "endpointId", d.event_id AS "eventId", e.payload::text AS body
     FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.id = $1`,
    [deliveryId],
  );
  return rows[0] ?? null;
}

/**
 * Starts attempt `n` if the endpoint has a free slot (fewer than `concurrency` attempts in flight): its row is
 * written and the delivery's count advanced. `busy` writes nothing: waiting for a slot is not an attempt.
 */
export async function beginAttempt(
  pool: Pool,
  {
    deliveryId,
    endpointId,
    n,
    concurrency,
  }: { deliveryId: string; endpointId: string; n: number; concurrency: number },
): Promise<'started' | 'busy'> {
  return inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('webhook_endpoint_slots'), hashtext($1))", [endpointId]);
    // What a dead worker left running is over: the workflow has moved on to this attempt.
    await client.query(
      `UPDATE webhook_attempts SET finished_at = now(), error_kind = 'interrupted'
       WHERE delivery_id = $1 AND n < $2 AND finished_at IS NULL`,
      [deliveryId, n],
    );
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_attempts
       WHERE endpoint_id = $1 AND finished_at IS NULL AND started_at > now() - make_interval(secs => $2)`,
      [endpointId, IN_FLIGHT_STALE_SECONDS],
    );
    if (rows[0].n >= concurrency) return 'busy';
    await client.query(
      `INSERT INTO webhook_attempts (delivery_id, n, endpoint_id, started_at) VALUES ($1, $2, $3, clock_timestamp())
       ON CONFLICT (delivery_id, n) DO NOTHING`,
      [deliveryId, n, endpointId],
    );
    await client.query(
      'UPDATE webhook_deliveries SET attempts = GREATEST(attempts, $2), last_attempt_at = now() WHERE id = $1',
      [deliveryId, n],
    );
    return 'started';
  });
}

export interface AttemptRecord {
  latencyMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  errorKind: string | null;
}

/** Completes attempt `n`; `deliveryStatus` ends the delivery too (succeeded, failed), unless it already ended. */
export async function finishAttempt(
  pool: Pool,
  deliveryId: string,
  n: number,
  record: AttemptRecord,
  deliveryStatus?: Exclude<DeliveryStatus, 'pending'>,
): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(
      `UPDATE webhook_attempts SET finished_at = clock_timestamp(), latency_ms = $3, response_status = $4,
         response_body = $5, error_kind = $6
       WHERE delivery_id = $1 AND n = $2`,
      [deliveryId, n, record.latencyMs, record.responseStatus, record.responseBody, record.errorKind],
    );
    if (deliveryStatus) await finishDeliveryWith(client, deliveryId, deliveryStatus);
  });
}

async function finishDeliveryWith(
  client: Pick<Pool, 'query'>,
  deliveryId: string,
  status: Exclude<DeliveryStatus, 'pending'>,
): Promise<void> {
  await client.query(
    `UPDATE webhook_deliveries SET status = $2, finished_at = now() WHERE id = $1 AND status = 'pending'`,
    [deliveryId, status],
  );
}

/** Ends a pending delivery without an attempt: given up on (failed), or its endpoint disabled. */
export async function finishDelivery(
  pool: Pool,
  deliveryId: string,
  status: Exclude<DeliveryStatus, 'pending' | 'succeeded'>,
): Promise<void> {
  await finishDeliveryWith(pool, deliveryId, status);
}

/**
 * A new delivery of the same event to the same endpoint (same `webhook-id`, a receiver deduplicating on it sees
 * a repeat), with the next sequence number; the worker's dispatcher starts it. Refused while the delivery it
 * repeats is still pending, and when its endpoint is disabled.
 */
export async function redeliverWebhook(pool: Pool, deliveryId: string): Promise<{ id: string; sequence: number }> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{
      event_id: string;
      endpoint_id: string;
      status: DeliveryStatus;
      disabled: boolean;
    }>(
      `SELECT d.event_id, d.endpoint_id, d.status, w.disabled_at IS NOT NULL AS disabled
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.id = $1 FOR UPDATE OF w`,
      [deliveryId],
    );
    const original = rows[0];
    if (!original)
      throw new UnknownWebhookDeliveryError(`no webhook delivery ${deliveryId} (npm run webhooks:deliveries)`);
    if (original.disabled) {
      throw new WebhookRedeliveryRefusedError(`the endpoint ${original.endpoint_id} of ${deliveryId} is disabled`);
    }
    const pending = await client.query(
      `SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2 AND status = 'pending'`,
      [original.event_id, original.endpoint_id],
    );
    if (pending.rowCount) {
      throw new WebhookRedeliveryRefusedError(
        `${deliveryId}'s event is still being delivered to ${original.endpoint_id}: wait for it to end`,
      );
    }
    const id = newId('webhookDelivery');
    const inserted = await client.query<{ sequence: number }>(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, sequence)
       SELECT $1, $2, $3, max(sequence) + 1 FROM webhook_deliveries WHERE event_id = $2 AND endpoint_id = $3
       RETURNING sequence`,
      [id, original.event_id, original.endpoint_id],
    );
    return { id, sequence: inserted.rows[0].sequence };
  });
}

export interface DeliveryListing {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  sequence: number;
  status: DeliveryStatus;
  attempts: number;
  created_at: Date;
  finished_at: Date | null;
  attempt_rows: Array<{
    n: number;
    started_at: string;
    latency_ms: number | null;
    response_status: number | null;
    response_body: string | null;
    error_kind: string | null;
  }>;
}

/**
 * The latest deliveries, newest first, each with its attempts; `failed` keeps those that failed or were disabled,
 * and those still retrying after a failed attempt.
 */
export async function listDeliveries(
  pool: Pool,
  { endpointId, failed = false, limit = 50 }: { endpointId?: string; failed?: boolean; limit?: number },
): Promise<DeliveryListing[]> {
  const { rows } = await pool.query<DeliveryListing>(
    `SELECT d.id, d.event_id, e.type AS event_type, d.endpoint_id, d.sequence, d.status, d.attempts, d.created_at,
       d.finished_at,
       COALESCE((SELECT json_agg(json_build_object('n', a.n, 'started_at', a.started_at, 'latency_ms', a.latency_ms,
           'response_status', a.response_status, 'response_body', a.response_body, 'error_kind', a.error_kind)
         ORDER BY a.n) FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempt_rows
     FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE ($1::text IS NULL OR d.endpoint_id = $1) AND (NOT $2 OR d.status IN ('failed', 'disabled') OR (d.status = 'pending' AND d.attempts > 0))
     ORDER BY d.created_at DESC, d.id DESC LIMIT $3`,
    [endpointId ?? null, failed, limit],
  );
  return rows;
}
