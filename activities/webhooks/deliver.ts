/**
 * The activities of a webhook delivery (workflows/webhook-delivery.ts). One call of `attemptWebhookDelivery` is
 * one HTTP attempt at most: Temporal does not retry it (the workflow owns the schedule), and it reports how the
 * attempt went as a value, so that a receiver's failure is not an activity failure. What it sends holds ids and
 * a status only; what it logs and records holds no secret and none of the body.
 */
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { MasterKeyring } from '../../platform/crypto/master-key';
import { metrics } from '../../platform/metrics';
import {
  checkWebhookUrl,
  resolveWebhookAddress,
  WebhookAddressRefusedError,
  type AddressPolicy,
} from '../../platform/webhooks/address-check';
import {
  beginAttempt,
  deliveryForAttempt,
  finishAttempt,
  finishDelivery,
  type AttemptRecord,
  type DeliveryForAttempt,
} from '../../platform/webhooks/deliveries';
import {
  disableWebhookEndpoint,
  endpointForDelivery,
  type EndpointForDelivery,
} from '../../platform/webhooks/endpoints';
import { sendWebhook } from '../../platform/webhooks/send';
import { webhookHeaders } from '../../platform/webhooks/signing';

export interface WebhookDeps {
  pool: Pool;
  keyring: MasterKeyring;
  policy: AddressPolicy;
  /** Attempts in flight per endpoint (AMY_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  clock: () => Date;
}

/** How one attempt went, for the workflow's schedule. */
export type WebhookAttemptResult =
  /** A 2xx: the delivery succeeded. */
  | { outcome: 'succeeded' }
  /** Anything else but 410: try again, no sooner than `retryAfterSeconds` when the receiver said so. */
  | { outcome: 'retry'; retryAfterSeconds: number | null }
  /** 410 Gone: the endpoint is disabled, and its pending deliveries with it. */
  | { outcome: 'gone' }
  /** Nothing to send any more: the endpoint was removed or disabled, or the delivery already ended. */
  | { outcome: 'stopped' }
  /** The endpoint's concurrency is taken: nothing was sent, and it is not an attempt. */
  | { outcome: 'busy' };

const HEARTBEAT_MS = 2000;

export function createWebhookActivities(deps: WebhookDeps) {
  const { pool, keyring, policy, clock } = deps;

  /** One POST: checked, signed, sent; what it recorded and how it went. */
  async function send(
    delivery: DeliveryForAttempt,
    endpoint: EndpointForDelivery,
  ): Promise<{ record: AttemptRecord; result: WebhookAttemptResult }> {
    const started = Date.now();
    const elapsed = () => Date.now() - started;
    try {
      const url = checkWebhookUrl(endpoint.url, policy);
      const address = await resolveWebhookAddress(url, policy);
      const headers = webhookHeaders(endpoint.secrets, delivery.eventId, clock(), delivery.body);
      const outcome = await sendWebhook(url, address, headers, delivery.body, clock);
      if (outcome.kind === 'error') {
        return {
          record: { latencyMs: elapsed(), responseStatus: null, responseBody: null, errorKind: outcome.errorKind },
          result: { outcome: 'retry', retryAfterSeconds: null },
        };
      }
      const { status } = outcome;
      const record = {
        latencyMs: elapsed(),
        responseStatus: status,
        responseBody: outcome.body,
        errorKind: status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status',
      };
      if (status >= 200 && status < 300) return { record, result: { outcome: 'succeeded' } };
      if (status === 410) return { record, result: { outcome: 'gone' } };
      return { record, result: { outcome: 'retry', retryAfterSeconds: outcome.retryAfterSeconds } };
    } catch (err) {
      if (!(err instanceof WebhookAddressRefusedError)) throw err;
      // Checked at registration, refused now: the name resolves elsewhere. Retried, in case it is a blip.
      return {
        record: { latencyMs: elapsed(), responseStatus: null, responseBody: null, errorKind: 'address_refused' },
        result: { outcome: 'retry', retryAfterSeconds: null },
      };
    }
  }

  /** Attempt `n` of the delivery: sends it once if there is still something to send and a slot to send it in. */
  async function attemptWebhookDelivery({
    deliveryId,
    n,
  }: {
    deliveryId: string;
    n: number;
  }): Promise<WebhookAttemptResult> {
    const delivery = await deliveryForAttempt(pool, deliveryId);
    if (!delivery || delivery.status !== 'pending') return { outcome: 'stopped' };
    const endpoint = await endpointForDelivery(pool, keyring, delivery.endpointId);
    if (!endpoint) return { outcome: 'stopped' };
    if (endpoint.disabled) {
      await finishDelivery(pool, deliveryId, 'disabled');
      return { outcome: 'stopped' };
    }
    const slot = await beginAttempt(pool, { deliveryId, endpointId: endpoint.id, n, concurrency: deps.concurrency });
    if (slot === 'busy') return { outcome: 'busy' };

    const heartbeat = setInterval(() => Context.current().heartbeat(), HEARTBEAT_MS);
    try {
      const { record, result } = await send(delivery, endpoint);
      const ends = result.outcome === 'succeeded' ? 'succeeded' : undefined;
      await finishAttempt(pool, deliveryId, n, record, ends);
      if (result.outcome === 'gone') {
        await disableWebhookEndpoint(pool, endpoint.id, `the receiver answered 410 Gone to ${deliveryId}`);
      }
      metrics.webhookAttemptEnded(
        result.outcome === 'retry' ? (record.errorKind ?? 'failed') : result.outcome,
        record.latencyMs,
      );
      return result;
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** The schedule ran out (three days): the delivery failed. */
  async function giveUpWebhookDelivery({ deliveryId }: { deliveryId: string }): Promise<void> {
    await finishDelivery(pool, deliveryId, 'failed');
  }

  return { attemptWebhookDelivery, giveUpWebhookDelivery };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
