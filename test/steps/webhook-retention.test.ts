/**
 * Retention of the webhook tables (platform/webhooks/retention.ts), on a real Postgres: an event written more
 * than 30 days ago goes with its deliveries and their attempts, unless a delivery of it is still pending; a
 * younger one stays. Batches of any size give the same result.
 */
import { newId } from '../../platform/ids';
import { purgeExpiredWebhookEvents, WEBHOOK_EVENT_RETENTION_DAYS } from '../../platform/webhooks/retention';
import { createTestDatabase, type TestDatabase } from '../support/database';

let t: TestDatabase;
let endpointId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  endpointId = newId('webhookEndpoint');
  await t.pool.query(
    `INSERT INTO webhook_endpoints (id, url, event_types, sealed_secret, secret_master_key_id)
     VALUES ($1, 'https://example.test/hook', ARRAY['turn.completed'], '\\x00', 'mk')`,
    [endpointId],
  );
});
afterAll(async () => {
  await t.drop();
});

/** An event written `ageDays` ago, delivered once with the delivery in `status`, with one attempt. */
async function event(ageDays: number, status: 'succeeded' | 'failed' | 'pending'): Promise<string> {
  const id = newId('webhookMessage');
  await t.pool.query(
    `INSERT INTO webhook_events (id, type, payload, dedupe_key, created_at, dispatched_at)
     VALUES ($1, 'turn.completed', $2, $1, now() - make_interval(days => $3), now() - make_interval(days => $3))`,
    [id, JSON.stringify({ type: 'turn.completed', data: { user_id: 'usr_x' } }), ageDays],
  );
  const deliveryId = newId('webhookDelivery');
  await t.pool.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempts) VALUES ($1, $2, $3, $4, 1)`,
    [deliveryId, id, endpointId, status],
  );
  await t.pool.query(`INSERT INTO webhook_attempts (delivery_id, n, endpoint_id) VALUES ($1, 1, $2)`, [
    deliveryId,
    endpointId,
  ]);
  return id;
}

const remaining = async () => {
  const { rows } = await t.pool.query<{ events: number; deliveries: number; attempts: number }>(
    `SELECT (SELECT count(*) FROM webhook_events)::int AS events, (SELECT count(*) FROM webhook_deliveries)::int AS deliveries,
            (SELECT count(*) FROM webhook_attempts)::int AS attempts`,
  );
  return rows[0];
};

test('events past the retention go with their deliveries and attempts; a pending delivery and a younger event keep theirs', async () => {
  const old = WEBHOOK_EVENT_RETENTION_DAYS + 1;
  const expired = [await event(old, 'succeeded'), await event(old, 'failed'), await event(old + 30, 'succeeded')];
  const stillPending = await event(old, 'pending');
  const young = await event(WEBHOOK_EVENT_RETENTION_DAYS - 1, 'succeeded');

  expect(await purgeExpiredWebhookEvents(t.pool, 2)).toBe(expired.length);
  const { rows } = await t.pool.query<{ id: string }>('SELECT id FROM webhook_events ORDER BY id');
  expect(rows.map((r) => r.id).sort()).toEqual([stillPending, young].sort());
  expect(await remaining()).toEqual({ events: 2, deliveries: 2, attempts: 2 });
  expect(await purgeExpiredWebhookEvents(t.pool)).toBe(0);
});
