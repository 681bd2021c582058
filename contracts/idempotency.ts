/**
 * `Idempotency-Key` on `POST /v1/turns` (Stripe's semantics). Kept free of zod, like ./event-catalog.ts,
 * so that a client can check its keys without bundling a schema library.
 */

/** 1–255 visible ASCII characters: no spaces or control characters, nothing a proxy could rewrite. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** How long a key is remembered: the same key and body within this window give the same turn. */
export const IDEMPOTENCY_KEY_TTL_HOURS = 24;
