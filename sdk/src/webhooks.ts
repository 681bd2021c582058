/**
 * Receiving the service's webhooks (docs/webhooks.md): `verifyWebhook` checks a request's Standard Webhooks
 * signature with the endpoint's `whsec_…` secret (the `standardwebhooks` library does the checking: the HMAC,
 * a constant-time comparison, and a timestamp no more than five minutes off) and returns the typed event.
 * Deduplicate on `webhook-id`: a retried or redelivered event keeps it.
 */
import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import type { WebhookEvent } from '../../contracts/webhooks';
import { AmyError } from './core/errors';

/** The request is not a webhook of the endpoint this secret belongs to (or is more than five minutes old). */
export class WebhookVerificationError extends AmyError {
  override name = 'WebhookVerificationError';
  override readonly code = 'webhook_verification_failed';
}

/** A request's headers as fetch (`Headers`), Node's `IncomingMessage.headers` or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const REQUIRED = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerValues(headers: WebhookHeaders): Record<string, string> {
  const read = (name: string): string | undefined => {
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
    const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(entry) ? entry.join(' ') : entry;
  };
  const values: Record<string, string> = {};
  for (const name of REQUIRED) {
    const value = read(name);
    if (value === undefined) throw new WebhookVerificationError(`the request has no ${name} header`);
    values[name] = value;
  }
  return values;
}

/**
 * The event a webhook request carries, once its signature is verified against `secret`; throws
 * WebhookVerificationError otherwise. `payload` is the request's body exactly as received (the raw text or
 * bytes, not JSON parsed and serialised again: the signature covers the bytes).
 */
export function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const values = headerValues(headers);
  try {
    return new Webhook(secret).verify(body, values) as WebhookEvent;
  } catch (err) {
    if (err instanceof LibraryVerificationError) throw new WebhookVerificationError(err.message);
    throw err;
  }
}
