/**
 * Webhooks end to end (docs/webhooks.md): endpoints registered with the operator's commands, the compiled worker's
 * dispatcher and delivery workflows, a local receiver that verifies every request with the `standardwebhooks`
 * library and with the SDK's `verifyWebhook`. The worker runs with AMY_WEBHOOKS_ALLOW_PRIVATE=1 (the receiver is
 * on 127.0.0.1) and a first retry half a second after a failure, so that retries take seconds.
 */
import { verifyWebhook, type WebhookEvent } from '@amy/sdk';
import { Webhook } from 'standardwebhooks';
import { runCli } from '../support/cli';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';

let svc: TestService;
let receiver: WebhookReceiver;
let user: { userId: string; apiKey: string };

beforeAll(async () => {
  [svc, receiver] = await Promise.all([
    startTestService({ env: { AMY_WEBHOOKS_ALLOW_PRIVATE: '1', AMY_WEBHOOK_FIRST_RETRY_SECONDS: '0.5' } }),
    startWebhookReceiver(),
  ]);
  user = await svc.createUser();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

const webhooks = (args: string[], env: Record<string, string> = {}) =>
  runCli('scripts/webhooks.ts', args, { DATABASE_URL: svc.database.url, AMY_WEBHOOKS_ALLOW_PRIVATE: '1', ...env });

/** `webhooks:add`: the id from its first line, the secret from its last. */
async function addEndpoint(path: string, events?: string): Promise<{ id: string; secret: string }> {
  const added = await webhooks(['add', '--url', `${receiver.url}${path}`, ...(events ? ['--events', events] : [])]);
  expect(added).toMatchObject({ code: 0, stderr: '' });
  const lines = added.stdout.trim().split('\n');
  const id = /Added webhook endpoint (we_[0-9A-Z]{26})/.exec(lines[0])?.[1];
  const secret = lines.at(-1)!;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  return { id: id!, secret };
}

async function turn(content: string): Promise<{ id: string; status: string; error: { code: string } | null }> {
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }], stream: false },
  });
  return res.body;
}

/** The event a request carries, checked with the library and with the SDK. */
function verified(request: ReceivedWebhook, secret: string): WebhookEvent {
  const byLibrary = new Webhook(secret).verify(request.body, request.headers);
  const bySdk = verifyWebhook(request.body, request.headers, secret);
  expect(bySdk).toEqual(byLibrary);
  return bySdk;
}

async function deliveriesOf(endpointId: string) {
  const { rows } = await svc.database.pool.query<{ id: string; status: string; sequence: number; event_id: string }>(
    'SELECT id, status, sequence, event_id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at, sequence',
    [endpointId],
  );
  return rows;
}

async function waitForDeliveries(endpointId: string, done: (statuses: string[]) => boolean) {
  for (;;) {
    const rows = await deliveriesOf(endpointId);
    if (done(rows.map((r) => r.status))) return rows;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let all: { id: string; secret: string };
let turns: { id: string; secret: string };

test('registration refuses http and private addresses without AMY_WEBHOOKS_ALLOW_PRIVATE, and unknown event types', async () => {
  const strict = { AMY_WEBHOOKS_ALLOW_PRIVATE: '0' };
  const http = await webhooks(['add', '--url', `${receiver.url}/x`], strict);
  expect(http.code).toBe(1);
  expect(http.stderr).toMatch(/^error: a webhook URL must be https/);
  const loopback = await webhooks(['add', '--url', `https://localhost:${receiver.port}/x`], strict);
  expect(loopback.code).toBe(1);
  expect(loopback.stderr).toMatch(/^error: localhost resolves to .*not a public address/);
  const metadata = await webhooks(['add', '--url', 'https://169.254.169.254/latest'], strict);
  expect(metadata.stderr).toMatch(/169\.254\.169\.254, not a public address/);
  const unknown = await webhooks(['add', '--url', `${receiver.url}/x`, '--events', 'turn.completed,turn.exploded']);
  expect(unknown.stderr).toMatch(/unknown event type turn\.exploded: choose among turn\.completed, /);
  const missing = await webhooks(['add']);
  expect(missing.stderr).toMatch(/--url is required\nusage: npm run webhooks:add/);
  expect((await webhooks(['list'])).stdout).toMatch(/^no webhook endpoints/);
});

test('a finished turn: one signed turn.completed per endpoint, memory.created per entry it wrote, payloads thin', async () => {
  all = await addEndpoint('/all', 'turn.completed,turn.failed,turn.cancelled,memory.created,account.deleted');
  turns = await addEndpoint('/turns');
  const preference = "I'm vegetarian and I only work out in the mornings.";
  const done = await turn(`Thanks! ${preference}`);
  expect(done.status).toBe('completed');

  const [completed] = await receiver.waitFor('/turns', 1);
  const event = verified(completed, turns.secret);
  expect(event).toEqual({
    type: 'turn.completed',
    timestamp: expect.any(String),
    data: {
      turn_id: done.id,
      user_id: user.userId,
      status: 'completed',
      error_code: null,
      created_at: expect.any(String),
      completed_at: event.timestamp,
    },
  });
  expect(completed.headers['webhook-id']).toMatch(/^msg_[0-9A-Z]{26}$/);
  expect(completed.headers['content-type']).toBe('application/json');

  const toAll = await receiver.waitFor('/all', 2);
  const types = toAll.map((r) => verified(r, all.secret).type).sort();
  expect(types).toEqual(['memory.created', 'turn.completed']);
  const memory = toAll.map((r) => verified(r, all.secret)).find((e) => e.type === 'memory.created')!;
  const { rows: entries } = await svc.database.pool.query('SELECT id FROM memory_entries WHERE source_turn_id = $1', [
    done.id,
  ]);
  expect(memory.data).toEqual({
    entry_id: entries[0].id,
    user_id: user.userId,
    turn_id: done.id,
    category: 'preference',
    created_at: expect.any(String),
  });
  // Ids and a status: nothing the user said, nothing the answer said.
  for (const request of receiver.received) expect(request.body).not.toMatch(/vegetarian|mornings|answer/i);

  // Exactly one: the delivery succeeded and nothing more is sent.
  expect(await waitForDeliveries(turns.id, (s) => s.length === 1 && s[0] === 'succeeded')).toHaveLength(1);
  expect(receiver.at('/turns')).toHaveLength(1);
});

test('a receiver failing three times then answering 2xx gets the same webhook-id each time; one success is recorded', async () => {
  const flaky = await addEndpoint('/flaky', 'turn.completed');
  receiver.answer('/flaky', { status: 500, body: 'down' }, { status: 503 }, { status: 502 }, { status: 204 });
  const done = await turn('thanks!');

  const requests = await receiver.waitFor('/flaky', 4);
  expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
  for (const request of requests) expect(verified(request, flaky.secret).data).toMatchObject({ turn_id: done.id });
  await waitForDeliveries(flaky.id, (s) => s[0] === 'succeeded');

  const { rows: attempts } = await svc.database.pool.query<{ n: number; response_status: number }>(
    `SELECT a.n, a.response_status FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
     WHERE d.endpoint_id = $1 ORDER BY a.n`,
    [flaky.id],
  );
  expect(attempts).toEqual([
    { n: 1, response_status: 500 },
    { n: 2, response_status: 503 },
    { n: 3, response_status: 502 },
    { n: 4, response_status: 204 },
  ]);
  const listed = await webhooks(['deliveries', '--endpoint', flaky.id]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toMatch(new RegExp(`turn\\.completed msg_\\w+ → ${flaky.id}  succeeded  4 attempt\\(s\\)`));
  expect(listed.stdout).toMatch(/#1 {2}\S+ {2}500 \(http_status\) {2}\d+ ms {2}"down"/);
  expect(listed.stdout).toMatch(/#4 {2}\S+ {2}204 {2}\d+ ms/);
  expect((await webhooks(['deliveries', '--failed'])).stdout).not.toContain(flaky.id);
  expect(receiver.at('/flaky')).toHaveLength(4);
});

test('failed and cancelled turns: turn.failed with its error code, turn.cancelled', async () => {
  await svc.scripted.faults.inject({ kind: 'overloaded', step: 'route', times: 10 });
  const failed = await turn('thanks!');
  svc.scripted.faults.clear();
  expect(failed.status).toBe('failed');

  await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 5000 });
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks!' }] },
  });
  const cancelledId = created.body.id as string;
  for (;;) {
    const { body } = await api(svc.url, 'GET', `/v1/turns/${cancelledId}`, { key: user.apiKey });
    if (body.progress?.current_step === 'fallback_reply') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect((await api(svc.url, 'POST', `/v1/turns/${cancelledId}/cancel`, { key: user.apiKey })).status).toBe(202);

  const events = async () =>
    (await receiver.waitFor('/turns', 1))
      .map((r) => verified(r, turns.secret))
      .filter((e) => e.type !== 'turn.completed');
  while ((await events()).length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
  // Each delivery is a workflow of its own: they arrive in either order (docs/webhooks.md).
  const received = await events();
  expect(received).toHaveLength(2);
  expect(received).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        type: 'turn.failed',
        data: expect.objectContaining({ turn_id: failed.id, status: 'failed', error_code: failed.error!.code }),
      }),
      expect.objectContaining({
        type: 'turn.cancelled',
        data: expect.objectContaining({ turn_id: cancelledId, status: 'failed', error_code: 'cancelled' }),
      }),
    ]),
  );
}, 120_000);

test('410 disables the endpoint; a redirect is not followed', async () => {
  const gone = await addEndpoint('/gone', 'turn.completed');
  const moved = await addEndpoint('/moved', 'turn.completed');
  receiver.answer('/gone', { status: 410 });
  receiver.answer('/moved', { status: 302, headers: { location: `${receiver.url}/target` } });
  await turn('thanks!');

  await receiver.waitFor('/gone', 1);
  expect(await waitForDeliveries(gone.id, (s) => s[0] === 'disabled')).toHaveLength(1);
  expect((await webhooks(['list'])).stdout).toMatch(
    new RegExp(`${gone.id} .* disabled \\S+ \\(the receiver answered 410 Gone to wd_\\w+\\)`),
  );

  await receiver.waitFor('/moved', 2);
  expect(receiver.at('/target')).toHaveLength(0);
  const failedList = await webhooks(['deliveries', '--failed']);
  expect(failedList.stdout).toMatch(/#1 {2}\S+ {2}302 \(redirect\)/);
  expect(failedList.stdout).toContain(gone.id);
  // Removed: the pending delivery stops before its next attempt.
  expect((await webhooks(['remove', moved.id])).code).toBe(0);
  expect(await deliveriesOf(moved.id)).toEqual([]);

  // A disabled endpoint gets nothing more.
  const delivered = (await deliveriesOf(turns.id)).length;
  await turn('thanks!');
  await waitForDeliveries(turns.id, (s) => s.length === delivered + 1 && s.every((x) => x === 'succeeded'));
  expect(await deliveriesOf(gone.id)).toHaveLength(1);
  expect(receiver.at('/gone')).toHaveLength(1);
});

test('secret rotation: both secrets sign during the grace period; redelivery sends the same webhook-id', async () => {
  const previousSecret = turns.secret;
  const rotated = await webhooks(['rotate-secret', turns.id, '--grace-hours', '1']);
  expect(rotated.code).toBe(0);
  expect(rotated.stdout).toMatch(/the previous one also signs until/);
  const newSecret = rotated.stdout.trim().split('\n').at(-1)!;
  expect(newSecret).toMatch(/^whsec_/);
  expect(newSecret).not.toBe(previousSecret);

  const [delivery] = (await deliveriesOf(turns.id)).slice(-1);
  const before = receiver.at('/turns').length;
  const redelivered = await webhooks(['redeliver', delivery.id]);
  expect(redelivered.stdout).toMatch(/^Redelivery wd_\w+ \(sequence 1\)/);
  const [again] = (await receiver.waitFor('/turns', before + 1)).slice(before);
  expect(again.headers['webhook-id']).toBe(delivery.event_id);
  expect(again.headers['webhook-signature'].split(' ')).toHaveLength(2);
  expect(verified(again, previousSecret).data).toMatchObject({ turn_id: expect.any(String) });
  expect(verified(again, newSecret)).toEqual(verified(again, previousSecret));

  // Without a grace period the old secret stops at once.
  const last = (await webhooks(['rotate-secret', turns.id, '--grace-hours', '0'])).stdout.trim().split('\n').at(-1)!;
  await waitForDeliveries(turns.id, (s) => s.every((x) => x !== 'pending'));
  await webhooks(['redeliver', delivery.id]);
  const [third] = (await receiver.waitFor('/turns', before + 2)).slice(before + 1);
  expect(third.headers['webhook-signature'].split(' ')).toHaveLength(1);
  expect(verified(third, last).type).toBe('turn.completed');
  expect(() => verifyWebhook(third.body, third.headers, newSecret)).toThrow(/No matching signature/);

  const refused = await webhooks(['redeliver', 'wd_01ARZ3NDEKTSV4RRFFQ69G5FAV']);
  expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error: no webhook delivery wd_/) });
});

test('an account deleted: account.deleted with its user id', async () => {
  const deletion = await api(svc.url, 'DELETE', '/v1/account', { key: user.apiKey });
  expect(deletion.status).toBe(200);
  expect(deletion.body.kept.map((k: { what: string }) => k.what)).toEqual([
    expect.stringContaining('deletion record'),
    expect.stringContaining('account.deleted webhook event'),
  ]);
  for (;;) {
    const events = receiver.at('/all').map((r) => verified(r, all.secret));
    const deleted = events.find((e) => e.type === 'account.deleted');
    if (deleted) {
      expect(deleted.data).toEqual({ user_id: user.userId, deleted_at: deleted.timestamp });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
