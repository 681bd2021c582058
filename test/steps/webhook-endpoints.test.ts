/**
 * Webhook endpoints against Postgres (platform/webhooks/endpoints.ts): secrets stored sealed, rotation's previous
 * secret with its grace period, a master key rotation that re-seals every secret, and the per-endpoint bound on
 * attempts in flight (platform/webhooks/deliveries.ts).
 */
import { newMasterKey, type MasterKey, type MasterKeyring } from '../../platform/crypto/master-key';
import {
  addWebhookEndpoint,
  endpointForDelivery,
  resealWebhookSecrets,
  rotateWebhookSecret,
} from '../../platform/webhooks/endpoints';
import { WebhookSecretUnavailableError } from '../../platform/webhooks/secrets';
import {
  beginAttempt,
  fanOutWebhookEvents,
  finishAttempt,
  unstartedDeliveries,
} from '../../platform/webhooks/deliveries';
import { createTestDatabase, type TestDatabase } from '../support/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.drop());

const ring = (current: MasterKey, ...previous: MasterKey[]): MasterKeyring => ({
  current,
  byId: (id) => [current, ...previous].find((k) => k.id === id)?.key,
});
const local = { allowPrivate: true };

test('a secret is stored sealed, never in the clear, and opens under the master key that sealed it', async () => {
  const master = newMasterKey();
  const { endpoint, secret } = await addWebhookEndpoint(database.pool, ring(master), local, {
    url: 'http://127.0.0.1:9/hook',
    eventTypes: ['turn.completed'],
  });
  const { rows } = await database.pool.query('SELECT * FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
  expect(JSON.stringify(rows[0])).not.toContain(secret.slice('whsec_'.length));
  expect(rows[0].secret_master_key_id).toBe(master.id);
  expect((await endpointForDelivery(database.pool, ring(master), endpoint.id))?.secrets).toEqual([secret]);
  await expect(endpointForDelivery(database.pool, ring(newMasterKey()), endpoint.id)).rejects.toThrow(
    WebhookSecretUnavailableError,
  );
});

test('rotation: the previous secret signs during its grace period only', async () => {
  const master = newMasterKey();
  const keys = ring(master);
  const { endpoint, secret: first } = await addWebhookEndpoint(database.pool, keys, local, {
    url: 'http://127.0.0.1:9/hook',
    eventTypes: ['turn.completed'],
  });
  const { secret: second, previousExpiresAt } = await rotateWebhookSecret(database.pool, keys, endpoint.id, 3600);
  expect(previousExpiresAt!.getTime()).toBeGreaterThan(Date.now());
  expect((await endpointForDelivery(database.pool, keys, endpoint.id))?.secrets).toEqual([second, first]);
  // The grace period over: the previous secret no longer signs.
  await database.pool.query(
    "UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1",
    [endpoint.id],
  );
  expect((await endpointForDelivery(database.pool, keys, endpoint.id))?.secrets).toEqual([second]);
  const { secret: third, previousExpiresAt: none } = await rotateWebhookSecret(database.pool, keys, endpoint.id, 0);
  expect(none).toBeNull();
  expect((await endpointForDelivery(database.pool, keys, endpoint.id))?.secrets).toEqual([third]);
});

test('a master key rotation re-seals current and previous secrets under the next key', async () => {
  const old = newMasterKey();
  const { endpoint, secret: first } = await addWebhookEndpoint(database.pool, ring(old), local, {
    url: 'http://127.0.0.1:9/hook',
    eventTypes: ['memory.created'],
  });
  const { secret: second } = await rotateWebhookSecret(database.pool, ring(old), endpoint.id, 3600);
  const next = newMasterKey();
  // Other endpoints of this database were sealed under other keys: the ring holds them all.
  const { rows } = await database.pool.query<{ id: string }>('SELECT id FROM webhook_endpoints WHERE id <> $1', [
    endpoint.id,
  ]);
  await database.pool.query('DELETE FROM webhook_endpoints WHERE id = ANY($1::text[])', [rows.map((r) => r.id)]);
  expect(await resealWebhookSecrets(database.pool, ring(old, next), next)).toBe(1);
  expect((await endpointForDelivery(database.pool, ring(next), endpoint.id))?.secrets).toEqual([second, first]);
  await expect(endpointForDelivery(database.pool, ring(old), endpoint.id)).rejects.toThrow(
    WebhookSecretUnavailableError,
  );
});

test("an endpoint's attempts in flight are bounded; an attempt a dead worker left is closed as interrupted", async () => {
  const keys = ring(newMasterKey());
  const { endpoint } = await addWebhookEndpoint(database.pool, keys, local, {
    url: 'http://127.0.0.1:9/hook',
    eventTypes: ['turn.completed'],
  });
  await database.pool.query(
    `INSERT INTO webhook_events (id, type, payload, dedupe_key) VALUES ('msg_a', 'turn.completed', '{}', 'a'), ('msg_b', 'turn.completed', '{}', 'b')`,
  );
  expect(await fanOutWebhookEvents(database.pool)).toBe(2);
  const [a, b] = await unstartedDeliveries(database.pool);
  const slot = (deliveryId: string, n: number) =>
    beginAttempt(database.pool, { deliveryId, endpointId: endpoint.id, n, concurrency: 1 });

  expect(await slot(a.id, 1)).toBe('started');
  expect(await slot(b.id, 1)).toBe('busy');
  // a's worker died: its next attempt closes the first, and takes the slot again.
  expect(await slot(a.id, 2)).toBe('started');
  expect(await slot(b.id, 1)).toBe('busy');
  await finishAttempt(
    database.pool,
    a.id,
    2,
    { latencyMs: 5, responseStatus: 200, responseBody: '', errorKind: null },
    'succeeded',
  );
  expect(await slot(b.id, 1)).toBe('started');

  const { rows } = await database.pool.query(
    'SELECT delivery_id, n, error_kind, finished_at IS NOT NULL AS finished FROM webhook_attempts ORDER BY delivery_id, n',
  );
  expect(rows).toEqual([
    { delivery_id: a.id, n: 1, error_kind: 'interrupted', finished: true },
    { delivery_id: a.id, n: 2, error_kind: null, finished: true },
    { delivery_id: b.id, n: 1, error_kind: null, finished: false },
  ]);
});
