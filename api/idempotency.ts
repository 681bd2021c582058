/**
 * `Idempotency-Key` on `POST /v1/turns`, with Stripe's semantics: the same key and the same body within
 * 24 h give the same turn and start nothing; the same key with another body is refused (422). What is
 * stored per key is the body's hash, checked under the user's row lock (see services/turns.ts).
 */
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_PATTERN } from '../contracts/idempotency';
import type { CreateTurnRequest } from '../contracts/turn';
import { ApiError } from './errors';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set on the answer to a request whose key had already created the turn. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** The request's key; undefined when it sent none. A malformed key is a 400, never ignored. */
export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!IDEMPOTENCY_KEY_PATTERN.test(raw)) {
    throw new ApiError(
      'invalid_field',
      `${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 visible ASCII characters.`,
      IDEMPOTENCY_KEY_HEADER,
    );
  }
  return raw;
}

/**
 * SHA-256 of the parsed body with its defaults filled in, as canonical JSON (keys sorted): two bodies
 * that ask for the same turn hash alike, `"stream": true` and `stream` left out included.
 */
export function hashCreateTurnRequest({ messages, stream, context }: CreateTurnRequest): string {
  return createHash('sha256').update(canonicalJson({ messages, stream, context })).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, v]) => `${JSON.stringify(key)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
