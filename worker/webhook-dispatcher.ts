/**
 * The webhook dispatcher (docs/webhooks.md#delivery), run by every worker: it turns the outbox
 * (platform/webhooks/outbox.ts) into delivery workflows, and the Terra inbox into ingestion workflows
 * (./terra-dispatcher.ts).
 *
 * 1. Each undispatched event becomes one delivery row per enabled endpoint subscribed to its type, and is marked
 *    dispatched, in one transaction (several workers split the events: SKIP LOCKED).
 * 2. Each delivery row without a workflow gets one, started under its deterministic id
 *    (`webhook:<event id>:<endpoint id>[:<sequence>]`, reuse refused), then is marked started.
 *
 * Every step is idempotent, so a worker dying anywhere in between loses nothing and duplicates nothing: the next
 * round (of this worker or another) finds the event undispatched or the delivery unstarted and does it again, and
 * Temporal refuses the second start of a workflow id it already has. `npm run webhooks:redeliver` only inserts a
 * delivery row: step 2 starts it. It polls every POLL_INTERVAL_MS, an event costing a second at most in latency.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Logger } from '../platform/logger';
import { dispatchTerraEvents } from './terra-dispatcher';
import {
  deliveryWorkflowId,
  fanOutWebhookEvents,
  markDeliveryStarted,
  unstartedDeliveries,
} from '../platform/webhooks/deliveries';
import type { RetrySchedule } from '../workflows/webhook-schedule';
import { WEBHOOK_DELIVERY_WORKFLOW_TYPE, type WebhookDeliveryInput } from '../workflows/webhook-delivery';

const POLL_INTERVAL_MS = 1000;

export interface WebhookDispatcher {
  /** Stops polling; resolves once the round in progress has ended. */
  stop(): Promise<void>;
}

/** One round: every undispatched event fanned out, every unstarted delivery started. Returns the workflows started. */
export async function dispatchWebhooks(deps: {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  schedule?: Partial<RetrySchedule>;
  /** Worker Versioning is on (./deploy-options.ts): deliveries follow new releases instead of pinning an old one. */
  versioned?: boolean;
}): Promise<number> {
  const { pool, temporal } = deps;
  while ((await fanOutWebhookEvents(pool)) > 0);
  let started = 0;
  for (;;) {
    const deliveries = await unstartedDeliveries(pool);
    if (deliveries.length === 0) return started;
    for (const delivery of deliveries) {
      try {
        await temporal.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
          workflowId: deliveryWorkflowId(delivery),
          taskQueue: deps.taskQueue,
          args: [{ deliveryId: delivery.id, schedule: deps.schedule } satisfies WebhookDeliveryInput],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          staticSummary: `Webhook ${delivery.eventId} to ${delivery.endpointId}`,
          ...(deps.versioned ? { versioningOverride: 'AUTO_UPGRADE' as const } : {}),
        });
        started += 1;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      await markDeliveryStarted(pool, delivery.id);
    }
  }
}

export function startWebhookDispatcher(
  deps: Parameters<typeof dispatchWebhooks>[0] & { logger: Logger },
): WebhookDispatcher {
  let stopped = false;
  let wake: () => void = () => undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        await dispatchWebhooks(deps);
        await dispatchTerraEvents(deps);
      } catch (err) {
        // Postgres or Temporal away: the outbox keeps everything, the next round resumes.
        deps.logger.warn('webhook or terra dispatch failed', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_INTERVAL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
    },
  };
}
