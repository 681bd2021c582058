/**
 * Webhook deliveries survive what a worker goes through (docs/webhooks.md#delivery), with real worker processes:
 *
 * - an event committed while no worker runs (as when a process dies between the commit and the workflow's
 *   start) is delivered once a worker comes back;
 * - a worker SIGKILLed while a receiver holds its request: the attempt is recorded as interrupted, a new worker
 *   sends the same webhook-id again, and the delivery ends succeeded;
 * - a worker without AMY_WEBHOOKS_ALLOW_PRIVATE refuses, at delivery time, an endpoint whose host resolves to a
 *   loopback address, and records why, whatever was allowed when it was registered.
 */
import type { ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { createPgPool } from '../../platform/pg-pool';
import { inTransaction } from '../../platform/pg-pool';
import { recordWebhookEvents } from '../../platform/webhooks/outbox';
import { runCli } from '../support/cli';
import { startTestService, type TestService } from '../support/service';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

let svc: TestService;
let receiver: WebhookReceiver;
let worker: ChildProcess | null = null;

const WORKER_ENV = { AMY_WEBHOOKS_ALLOW_PRIVATE: '1', AMY_WEBHOOK_FIRST_RETRY_SECONDS: '0.5' };

beforeAll(async () => {
  [svc, receiver] = await Promise.all([startTestService({ env: WORKER_ENV }), startWebhookReceiver()]);
  await svc.stopWorker(); // this suite's workers are real processes it starts and kills
}, 120_000);
afterAll(async () => {
  if (worker) await killHard(worker);
  await receiver?.close();
  await svc?.close();
});

async function addEndpoint(url: string): Promise<{ id: string; secret: string }> {
  const added = await runCli('scripts/webhooks.ts', ['add', '--url', url, '--events', 'turn.completed'], {
    DATABASE_URL: svc.database.url,
    AMY_WEBHOOKS_ALLOW_PRIVATE: '1',
  });
  expect(added.code).toBe(0);
  const lines = added.stdout.trim().split('\n');
  return { id: /(we_\w+)/.exec(lines[0])![1], secret: lines.at(-1)! };
}

/** A turn.completed event committed as a turn's end commits it (the outbox write alone: no turn runs here). */
async function commitEvent(turnId: string): Promise<void> {
  const pool = createPgPool(svc.database.url, 1);
  try {
    await inTransaction(pool, (client) =>
      recordWebhookEvents(client, [
        {
          dedupeKey: `turn.completed:${turnId}:1`,
          event: {
            type: 'turn.completed',
            timestamp: new Date().toISOString(),
            data: {
              turn_id: turnId,
              user_id: 'usr_test',
              status: 'completed',
              error_code: null,
              created_at: new Date().toISOString(),
              completed_at: new Date().toISOString(),
            },
          },
        },
      ]),
    );
  } finally {
    await pool.end();
  }
}

async function attemptsOf(endpointId: string) {
  const { rows } = await svc.database.pool.query<{
    n: number;
    response_status: number | null;
    error_kind: string | null;
  }>(
    `SELECT a.n, a.response_status, a.error_kind FROM webhook_attempts a
     JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = $1 ORDER BY a.n`,
    [endpointId],
  );
  return rows;
}

async function statusOf(endpointId: string): Promise<string | undefined> {
  const { rows } = await svc.database.pool.query<{ status: string }>(
    'SELECT status FROM webhook_deliveries WHERE endpoint_id = $1',
    [endpointId],
  );
  return rows[0]?.status;
}

async function until(check: () => Promise<boolean>) {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 200));
}

test('an event committed with no worker running is delivered once one starts; a worker killed mid-delivery loses nothing', async () => {
  const endpoint = await addEndpoint(`${receiver.url}/held`);
  receiver.answer('/held', { hold: true });
  await commitEvent('turn_01ARZ3NDEKTSV4RRFFQ69G5FAV');

  worker = await spawnWorkerProcess(svc.config, { env: WORKER_ENV });
  const [held] = await receiver.waitFor('/held', 1);
  await killHard(worker);
  receiver.answer('/held', { status: 200 });
  receiver.release(500); // the dead worker's connection is gone; nothing answers it
  worker = await spawnWorkerProcess(svc.config, { env: WORKER_ENV });

  const requests = await receiver.waitFor('/held', 2);
  await until(async () => (await statusOf(endpoint.id)) === 'succeeded');
  expect(requests.map((r) => r.headers['webhook-id'])).toEqual([
    held.headers['webhook-id'],
    held.headers['webhook-id'],
  ]);
  expect(new Webhook(endpoint.secret).verify(requests[1].body, requests[1].headers)).toMatchObject({
    type: 'turn.completed',
  });
  expect(await attemptsOf(endpoint.id)).toEqual([
    { n: 1, response_status: null, error_kind: 'interrupted' },
    { n: 2, response_status: 200, error_kind: null },
  ]);
  expect(receiver.at('/held')).toHaveLength(2);
}, 120_000);

test('without AMY_WEBHOOKS_ALLOW_PRIVATE a worker refuses at delivery time a host that resolves to loopback', async () => {
  if (worker) await killHard(worker);
  worker = await spawnWorkerProcess(svc.config, { env: { ...WORKER_ENV, AMY_WEBHOOKS_ALLOW_PRIVATE: '0' } });
  // Registered where private receivers were allowed; `localhost` resolves to 127.0.0.1 (or ::1).
  const endpoint = await addEndpoint(`https://localhost:${receiver.port}/rebound`);
  await commitEvent('turn_01ARZ3NDEKTSV4RRFFQ69G5FAW');

  // An attempt's row is written when it starts and its outcome when it ends: wait for the second one's outcome.
  await until(async () => (await attemptsOf(endpoint.id))[1]?.error_kind != null);
  const attempts = await attemptsOf(endpoint.id);
  expect(attempts.slice(0, 2)).toEqual([
    { n: 1, response_status: null, error_kind: 'address_refused' },
    { n: 2, response_status: null, error_kind: 'address_refused' },
  ]);
  expect(receiver.at('/rebound')).toHaveLength(0);
  expect(await statusOf(endpoint.id)).toBe('pending');
}, 120_000);
