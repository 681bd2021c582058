/**
 * One webhook event delivered to one endpoint (docs/webhooks.md#delivery), started by the worker's dispatcher
 * (platform/webhooks/dispatcher.ts) with the id `webhook:<event id>:<endpoint id>[:<sequence>]`, so a second
 * start of the same delivery is refused. Each attempt is an activity that Temporal does not retry: this workflow
 * owns the schedule (./webhook-schedule.ts), durable across worker crashes and deploys for its three days. An
 * attempt interrupted by a dead worker counts as a failed one (its heartbeat stops) and is tried again.
 *
 * It carries ids only (no payload, no secret), so its history in Temporal holds nothing of a user's. Under Worker
 * Versioning it is not pinned like a turn (the dispatcher starts it AUTO_UPGRADE): three days is far longer than a
 * release, so it moves to the new workers' code, which must replay it (`patched()`), as any long workflow's must.
 */
import { ActivityFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities, WebhookAttemptResult } from '../activities/webhooks/deliver';
import { busyDelayMs, retryDelayMs, WEBHOOK_RETRY_SCHEDULE, type RetrySchedule } from './webhook-schedule';

export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'WebhookDeliveryWorkflow';

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** The schedule when the dispatcher started it (AMY_WEBHOOK_FIRST_RETRY_SECONDS); the default's otherwise. */
  schedule?: Partial<RetrySchedule>;
}

/** One HTTP attempt: 10 s at most, then its bookkeeping; a dead worker is noticed by the heartbeat. */
const { attemptWebhookDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '6 seconds',
  retry: { maximumAttempts: 1 },
});

/** Bookkeeping against our own Postgres: retried until Postgres is back. */
const { giveUpWebhookDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Returns how the delivery ended: succeeded, failed (the schedule ran out), gone (410) or stopped. */
export async function WebhookDeliveryWorkflow({
  deliveryId,
  schedule,
}: WebhookDeliveryInput): Promise<'succeeded' | 'failed' | 'gone' | 'stopped'> {
  const plan = { ...WEBHOOK_RETRY_SCHEDULE, ...schedule };
  // Date.now and Math.random inside a workflow are Temporal's replay-safe ones: the workflow task's time and a
  // random sequence seeded per run, the same on every replay.
  const deadline = Date.now() + plan.giveUpAfterSeconds * 1000;
  let attempts = 0;
  let failures = 0;
  for (;;) {
    let result: WebhookAttemptResult;
    try {
      result = await attemptWebhookDelivery({ deliveryId, n: attempts + 1 });
    } catch (err) {
      // The attempt's worker died or Postgres failed it: a failed attempt, tried again on the schedule.
      if (!(err instanceof ActivityFailure)) throw err;
      result = { outcome: 'retry', retryAfterSeconds: null };
    }
    let waitMs: number;
    if (result.outcome === 'busy') {
      waitMs = busyDelayMs(Math.random());
    } else {
      attempts += 1;
      if (result.outcome !== 'retry') return result.outcome;
      failures += 1;
      waitMs = retryDelayMs(plan, failures, result.retryAfterSeconds, Math.random());
    }
    if (Date.now() + waitMs > deadline) {
      await giveUpWebhookDelivery({ deliveryId });
      return 'failed';
    }
    await sleep(waitMs);
  }
}
