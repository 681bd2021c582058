/**
 * What can go wrong with an LLM call, as errors the workflow can tell apart by `name` (Temporal matches
 * `nonRetryableErrorTypes` against it): each name is a failure type, whose treatment by the workflow is
 * contracts/failure-types.ts's.
 */
import {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type { FailureType } from '../../contracts/failure-types';

/** How a call ended, as recorded in `llm_calls.outcome`. */
export type LlmCallOutcome =
  | 'success'
  | 'overloaded'
  | 'server_error'
  | 'rate_limited'
  | 'timeout'
  | 'connection_error'
  | 'stream_interrupted'
  | 'bad_request'
  | 'auth_error'
  | 'aborted'
  | 'internal_error';

interface LlmErrorDetails {
  requestId?: string | null;
  status?: number | null;
  cause?: unknown;
}

export abstract class LlmError extends Error {
  /** Anthropic's `request-id`, for support tickets and for matching the ledger row. */
  readonly requestId: string | null;
  /** HTTP status of the failed response; null when there was none (network, stream, parse). */
  readonly status: number | null;

  constructor(message: string, { requestId = null, status = null, cause }: LlmErrorDetails = {}) {
    super(message, { cause });
    this.requestId = requestId;
    this.status = status;
  }
}

/** The model API is overloaded, failing, rate limiting or unreachable: worth retrying later. */
export class UpstreamUnavailableError extends LlmError {
  override name: FailureType = 'UpstreamUnavailableError';
}

/** The model API refused the request itself (a 4xx other than 408/409/429): a retry would be refused too. */
export class UpstreamRequestError extends LlmError {
  override name: FailureType = 'UpstreamRequestError';
}

/** The model answered, but not in the shape the step needs. The calling step decides whether to retry. */
export class ModelOutputInvalidError extends LlmError {
  override name: FailureType = 'ModelOutputInvalidError';
}

/** The caller aborted the call (activity cancellation); nothing upstream went wrong. */
export class LlmCallAbortedError extends LlmError {
  override name: FailureType = 'LlmCallAbortedError';
}

export interface MappedLlmFailure {
  outcome: LlmCallOutcome;
  error: LlmError;
}

/** Anthropic's error type from an error body (`{"type":"error","error":{"type":…}}`). */
function errorTypeOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const inner = (body as { error: unknown }).error;
  if (typeof inner !== 'object' || inner === null || !('type' in inner)) return undefined;
  return String((inner as { type: unknown }).type);
}

function outcomeOfStatus(status: number): LlmCallOutcome {
  if (status === 529) return 'overloaded';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status === 401 || status === 403) return 'auth_error';
  if (status >= 500) return 'server_error';
  // 409 is a transient conflict the SDK itself would retry; other 4xx say the request is wrong.
  return status === 409 ? 'server_error' : 'bad_request';
}

/** An `error` event inside a 200 stream carries no status, only the error type. */
function outcomeOfStreamErrorType(type: string | undefined): LlmCallOutcome {
  if (type === 'overloaded_error') return 'overloaded';
  if (type === 'rate_limit_error') return 'rate_limited';
  if (type === 'invalid_request_error') return 'bad_request';
  return 'server_error';
}

const RETRYABLE_OUTCOMES: ReadonlySet<LlmCallOutcome> = new Set([
  'overloaded',
  'server_error',
  'rate_limited',
  'timeout',
  'connection_error',
  'stream_interrupted',
]);

/** Maps an SDK error to the outcome to record and the error to throw; null for anything that is not the SDK's. */
export function mapLlmError(err: unknown): MappedLlmFailure | null {
  if (!(err instanceof AnthropicError)) return null;
  if (err instanceof APIUserAbortError) {
    return { outcome: 'aborted', error: new LlmCallAbortedError('LLM call aborted by the caller', { cause: err }) };
  }
  let outcome: LlmCallOutcome;
  if (err instanceof APIConnectionTimeoutError) outcome = 'timeout';
  else if (err instanceof APIConnectionError) outcome = 'connection_error';
  else if (err instanceof APIError) {
    outcome = err.status === undefined ? outcomeOfStreamErrorType(errorTypeOf(err.error)) : outcomeOfStatus(err.status);
  }
  // The SDK's plain AnthropicError: the stream broke off or ended without a complete message.
  else outcome = 'stream_interrupted';

  const details: LlmErrorDetails = {
    requestId: err instanceof APIError ? (err.requestID ?? null) : null,
    status: err instanceof APIError ? (err.status ?? null) : null,
    cause: err,
  };
  const message = `model API call failed (${outcome}): ${err.message}`;
  return {
    outcome,
    error: RETRYABLE_OUTCOMES.has(outcome)
      ? new UpstreamUnavailableError(message, details)
      : new UpstreamRequestError(message, details),
  };
}
