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
  not_found: 404,
  turn_events_expired: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  memory_limit_reached: 409,
  idempotency_key_in_use: 409,
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

/** Codes a turn can fail with (`Turn.error.code`, `turn.failed`). */
export type TurnErrorCode =
  | 'upstream_unavailable'
  | 'model_output_invalid'
  | 'agent_not_available'
  /** The user reached a cost cap while the turn ran (docs/operations.md#cost-caps). */
  | 'cost_cap_exceeded'
  | 'cancelled'
  | 'internal_error'
  /** The turn's workflow closed without recording an outcome (terminated, past its time limit, lost). */
  | 'turn_abandoned';

export const errorBodySchema = z.object({
  code: z.string(),
  message: z.string(),
  request_id: z.string(),
  docs_url: z.string(),
  field: z.string().optional(),
});
export const errorEnvelopeSchema = z.object({ error: errorBodySchema });
export type ErrorBody = z.infer<typeof errorBodySchema>;
