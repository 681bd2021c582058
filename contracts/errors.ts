import { z } from 'zod';

export { docsUrl } from './docs-url';

/** Every error code the API can return, with its HTTP status. Codes are stable; messages are not. */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_field: 400,
  invalid_json: 400,
  /** A memory entry that looks like it holds a credential: Amy never remembers one. */
  secret_detected: 400,
  authentication_required: 401,
  invalid_api_key: 401,
  /** A Terra delivery whose `terra-signature` does not verify (docs/terra.md#signing). */
  invalid_signature: 401,
  not_found: 404,
  turn_events_expired: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  memory_limit_reached: 409,
  idempotency_key_in_use: 409,
  /** An answer to a question the turn is not waiting on (POST /v1/turns/:id/input): another request, or none. */
  input_not_requested: 409,
  /** An answer to a question already answered. */
  input_already_received: 409,
  /** An answer after the question's deadline: the turn went on without it. */
  input_expired: 410,
  idempotency_key_reused: 422,
  concurrency_limit_exceeded: 429,
  rate_limited: 429,
  too_many_streams: 429,
  cost_cap_exceeded: 429,
  internal_error: 500,
  upstream_unavailable: 503,
  service_unavailable: 503,
} as const;
export type ApiErrorCode = keyof typeof ERROR_STATUS;

/**
 * Every code a turn can fail with (`Turn.error.code`, `turn.failed`), and nothing else: the workflow chooses
 * the first five (workflows/turn-workflow.ts), the reconciler and the API's start of a turn the last
 * (platform/turn-ending.ts). The OpenAPI document lists them as an enum, so a code added here is one a client
 * is told of.
 */
const TURN_ERROR_CODES = [
  /** The model API failed, or a step timed out, past the retry budget. */
  'upstream_unavailable',
  /** The model's output stayed malformed past the retries. */
  'model_output_invalid',
  /** The user reached a cost cap while the turn ran (docs/operations.md#cost-caps). */
  'cost_cap_exceeded',
  /** A client cancelled it (POST /v1/turns/:id/cancel). */
  'cancelled',
  /** A bug: the message names the step and nothing of the cause. */
  'internal_error',
  /** The turn asked, its request said `on_expiry: fail`, and no answer came by the deadline (docs/api.md#asking-back). */
  'input_expired',
  /** The turn's workflow closed without recording an outcome (terminated, past its time limit, lost), or never started. */
  'turn_abandoned',
] as const;
export type TurnErrorCode = (typeof TURN_ERROR_CODES)[number];

export const errorBodySchema = z.object({
  code: z.string(),
  message: z.string(),
  request_id: z.string(),
  docs_url: z.string(),
  field: z.string().optional(),
});
export const errorEnvelopeSchema = z.object({ error: errorBodySchema });
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** A failed turn's `error`: the envelope's body, with one of TURN_ERROR_CODES. */
export const turnErrorBodySchema = errorBodySchema.extend({
  code: z.enum(TURN_ERROR_CODES).describe('Why the turn failed: one of the turn error codes (docs/api.md#errors).'),
});
export type TurnErrorBody = z.infer<typeof turnErrorBodySchema>;
