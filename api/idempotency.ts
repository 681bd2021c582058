/**
 * `Idempotency-Key` on `POST /v1/turns`, with Stripe's semantics: the same key and the same body within
 * 24 h give the same turn and start nothing; the same key with another body is refused (422). What is
 * stored per key is the body's hash, checked under the user's row lock (see tables/turns.ts).
 *
 * A blocking replay (`"stream": false`) of a turn still in flight waits for its end like the original
 * request, but only `MAX_WAITING_REPLAYS_PER_KEY` of them per key and API process: each holds a socket
 * and a long poll on Temporal for minutes, and a client repeating one key must not hold thousands. One
 * more is answered at once, `409 idempotency_key_in_use` (the IETF Idempotency-Key draft's answer to a
 * request whose original is still being processed).
 */
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_PATTERN } from '../contracts/idempotency';
import type { CreateTurnRequest } from '../contracts/turn';
import { ApiError } from './errors';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set on the answer to a request whose key had already created the turn. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Enough for a client whose blocking request was cut (a proxy's idle timeout) to retry it, and for a
 * second process of its own to ask too; the original request is not counted.
 */
export const MAX_WAITING_REPLAYS_PER_KEY = 2;
/** A turn in flight ends in minutes; a client told to wait asks again with the same key (or streams it). */
const KEY_IN_USE_RETRY_AFTER_SECONDS = 5;

export const idempotencyKeyInUse = () =>
  new ApiError(
    'idempotency_key_in_use',
    `${MAX_WAITING_REPLAYS_PER_KEY} requests with this Idempotency-Key are already waiting for the turn it created to end; send it again after Retry-After.`,
    IDEMPOTENCY_KEY_HEADER,
    { 'Retry-After': String(KEY_IN_USE_RETRY_AFTER_SECONDS) },
  );

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
export function hashCreateTurnRequest({ messages, stream, context, interaction }: CreateTurnRequest): string {
  // `interaction` only when sent, so a body without it hashes as it did before the field existed.
  return createHash('sha256')
    .update(canonicalJson({ messages, stream, context, ...(interaction ? { interaction } : {}) }))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, v]) => `${JSON.stringify(key)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
