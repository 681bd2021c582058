/**
 * The Standard Webhooks headers of an attempt (https://www.standardwebhooks.com): `webhook-id` (the event's id,
 * the same on every attempt and every redelivery, for the receiver to deduplicate on), `webhook-timestamp` (the
 * attempt's, in seconds) and `webhook-signature`, one `v1,<base64 HMAC-SHA256>` per signing secret, separated by
 * spaces: during a rotation's grace period the new secret and the old one both sign, and a receiver holding
 * either verifies.
 */
import { Webhook } from 'standardwebhooks';

export function webhookHeaders(
  secrets: string[],
  msgId: string,
  at: Date,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(msgId, at, body)).join(' '),
  };
}
