/**
 * The webhook delivery workflow (workflows/webhook-delivery.ts) with fake attempt activities: the schedule's
 * branches in seconds, with a schedule shrunk to milliseconds.
 */
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { WebhookAttemptResult } from '../../activities/webhooks/deliver';
import { temporalCliPath } from '../../dev/stack/local-temporal';
import { quietBundlerLogger } from '../../worker/create-worker';
import type { WebhookDeliveryInput } from '../../workflows/webhook-delivery';
// The workflow tier's quiet Temporal runtime (warnings kept, errors shown): the fakes fail on purpose.
import './support';

const taskQueue = 'webhook-workflow-tests';
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;

/** What each delivery's attempts answer, in order, and what they were asked. */
const scripts = new Map<string, Array<WebhookAttemptResult | 'crash'>>();
const asked = new Map<string, number[]>();
const givenUp: string[] = [];

beforeAll(async () => {
  let code: string;
  [env, { code }] = await Promise.all([
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporalCliPath() },
        ip: '127.0.0.1',
        log: { format: 'json', level: 'error' },
      },
    }),
    bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietBundlerLogger }),
  ]);
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { code },
    activities: {
      async attemptWebhookDelivery({ deliveryId, n }: { deliveryId: string; n: number }) {
        asked.set(deliveryId, [...(asked.get(deliveryId) ?? []), n]);
        const next = scripts.get(deliveryId)?.shift() ?? { outcome: 'succeeded' };
        if (next === 'crash') throw ApplicationFailure.nonRetryable('the worker went away', 'Crash');
        return next;
      },
      async giveUpWebhookDelivery({ deliveryId }: { deliveryId: string }) {
        givenUp.push(deliveryId);
      },
    },
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const FAST = { firstRetrySeconds: 0.01, maxIntervalSeconds: 0.05 };

async function deliver(deliveryId: string, script: Array<WebhookAttemptResult | 'crash'>, schedule = FAST) {
  scripts.set(deliveryId, script);
  return env.client.workflow.execute('WebhookDeliveryWorkflow', {
    workflowId: `webhook:test:${deliveryId}`,
    taskQueue,
    args: [{ deliveryId, schedule } satisfies WebhookDeliveryInput],
  });
}

const retry: WebhookAttemptResult = { outcome: 'retry', retryAfterSeconds: null };

test('three failures, then a success: four attempts, numbered 1 to 4', async () => {
  await expect(deliver('d1', [retry, retry, retry, { outcome: 'succeeded' }])).resolves.toBe('succeeded');
  expect(asked.get('d1')).toEqual([1, 2, 3, 4]);
});

test('a busy endpoint is waited for without counting an attempt', async () => {
  await expect(
    deliver('d2', [{ outcome: 'busy' }, { outcome: 'busy' }, retry, { outcome: 'succeeded' }]),
  ).resolves.toBe('succeeded');
  expect(asked.get('d2')).toEqual([1, 1, 1, 2]);
});

test('an attempt whose activity failed (a dead worker) counts as a failed attempt and is retried', async () => {
  await expect(deliver('d3', ['crash', { outcome: 'succeeded' }])).resolves.toBe('succeeded');
  expect(asked.get('d3')).toEqual([1, 2]);
});

test('410 Gone ends the delivery at once; so does an endpoint removed or disabled', async () => {
  await expect(deliver('d4', [{ outcome: 'gone' }])).resolves.toBe('gone');
  await expect(deliver('d5', [retry, { outcome: 'stopped' }])).resolves.toBe('stopped');
  expect(asked.get('d4')).toEqual([1]);
  expect(asked.get('d5')).toEqual([1, 2]);
});

test('past the schedule the delivery fails, and says so', async () => {
  const always = Array.from({ length: 1000 }, () => retry);
  await expect(deliver('d6', always, { ...FAST, giveUpAfterSeconds: 0.3 } as typeof FAST)).resolves.toBe('failed');
  expect(givenUp).toEqual(['d6']);
  expect(asked.get('d6')!.length).toBeGreaterThan(1);
});
