/**
 * One class per kind of failure, so callers branch with `instanceof` rather than on strings.
 * Errors the API returned carry its envelope (`code`, `message`, `request_id`, `docs_url`) and the
 * status; errors that never got an answer are `APIConnectionError`s. Every error has `status`,
 * `code`, `message` and `requestId` (undefined where the server never assigned one).
 */
import type { ErrorBody } from '../../../contracts/errors';
import { ownValue } from '../../../contracts/own-keys';

export class AmyError extends Error {
  override name = 'AmyError';
  readonly status: number | undefined = undefined;
  readonly code: string = 'amy_error';
  readonly requestId: string | undefined = undefined;
}

export class APIError extends AmyError {
  override name = 'APIError';
  override readonly status: number;
  override readonly code: string;
  override readonly requestId: string | undefined;
  readonly docsUrl: string | undefined;
  /** The request field the error is about (`invalid_field`). */
  readonly field: string | undefined;
  readonly headers: Headers;

  constructor(status: number, body: Partial<ErrorBody> | undefined, headers: Headers) {
    super(body?.message ?? `The API answered ${status}.`);
    this.status = status;
    this.code = body?.code ?? `http_${status}`;
    this.requestId = body?.request_id ?? headers.get('x-request-id') ?? undefined;
    this.docsUrl = body?.docs_url;
    this.field = body?.field;
    this.headers = headers;
  }

  /** `Retry-After` in milliseconds (seconds or an HTTP date), if the server sent one. */
  get retryAfterMs(): number | undefined {
    return parseRetryAfter(this.headers.get('retry-after'));
  }

  /** The subclass for this status and code (a code the SDK does not know is judged by its status alone). */
  static from(status: number, body: Partial<ErrorBody> | undefined, headers: Headers): APIError {
    const Class =
      (body?.code && ownValue(BY_CODE, body.code)) ||
      ownValue(BY_STATUS, status) ||
      (status >= 500 ? InternalServerError : APIError);
    return new Class(status, body, headers);
  }
}

export class BadRequestError extends APIError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
}
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
}
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
}
/** The turn's replay window has passed; `GET /v1/turns/:id` still has its outcome. */
export class TurnEventsExpiredError extends NotFoundError {
  override name = 'TurnEventsExpiredError';
}
export class ConflictError extends APIError {
  override name = 'ConflictError';
}
/** `amy.turns.respond`: the turn waits for no answer to that request (another request, or the turn has ended). */
export class InputNotRequestedError extends ConflictError {
  override name = 'InputNotRequestedError';
}
/** `amy.turns.respond`: the request was answered already (by another answer, or another key). */
export class InputAlreadyReceivedError extends ConflictError {
  override name = 'InputAlreadyReceivedError';
}
/** Gone: the thing asked about is past its time. */
export class GoneError extends APIError {
  override name = 'GoneError';
}
/** `amy.turns.respond` after the request's deadline: the turn went on without the answer. */
export class InputExpiredError extends GoneError {
  override name = 'InputExpiredError';
}
export class PayloadTooLargeError extends APIError {
  override name = 'PayloadTooLargeError';
}
export class UnsupportedMediaTypeError extends APIError {
  override name = 'UnsupportedMediaTypeError';
}
export class UnprocessableEntityError extends APIError {
  override name = 'UnprocessableEntityError';
}
/** The same `Idempotency-Key` was sent earlier with a different body. */
export class IdempotencyKeyReusedError extends UnprocessableEntityError {
  override name = 'IdempotencyKeyReusedError';
}
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
}
/** The user already has as many turns queued or running as allowed (3 by default). */
export class ConcurrencyLimitError extends RateLimitError {
  override name = 'ConcurrencyLimitError';
}
/** The user reached a daily or monthly cost cap; `retryAfterMs` runs to the end of its UTC day or month. */
export class CostCapExceededError extends RateLimitError {
  override name = 'CostCapExceededError';
}
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}
export class ServiceUnavailableError extends InternalServerError {
  override name = 'ServiceUnavailableError';
}

type APIErrorClass = new (status: number, body: Partial<ErrorBody> | undefined, headers: Headers) => APIError;

const BY_STATUS: Record<number, APIErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  500: InternalServerError,
  503: ServiceUnavailableError,
};

const BY_CODE: Record<string, APIErrorClass> = {
  turn_events_expired: TurnEventsExpiredError,
  concurrency_limit_exceeded: ConcurrencyLimitError,
  cost_cap_exceeded: CostCapExceededError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  input_not_requested: InputNotRequestedError,
  input_already_received: InputAlreadyReceivedError,
  input_expired: InputExpiredError,
};

/** No answer came back: the network failed, or the request or stream was cut off. */
export class APIConnectionError extends AmyError {
  override name = 'APIConnectionError';
  override readonly code: string = 'connection_error';

  constructor(message = 'Could not reach the Amy API.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The request, its body included, took longer than `timeoutMs`. */
export class APIConnectionTimeoutError extends APIConnectionError {
  override name = 'APIConnectionTimeoutError';
  override readonly code: string = 'timeout';

  constructor(timeoutMs: number) {
    super(`The request did not finish within ${timeoutMs} ms.`);
  }
}

/**
 * A turn's event stream failed `maxRetries` times in a row without an event in between. Resume
 * later with `stream(turnId, { lastEventId: err.lastEventId })`; nothing before it is lost.
 */
export class StreamDisconnectedError extends APIConnectionError {
  override name = 'StreamDisconnectedError';
  override readonly code: string = 'stream_disconnected';
  readonly lastEventId: number;
  readonly attempts: number;

  constructor(args: { turnId: string; lastEventId: number; attempts: number; cause: unknown }) {
    super(
      `The event stream of ${args.turnId} failed ${args.attempts} times in a row (last event id ${args.lastEventId}): ${describe(args.cause)}`,
      { cause: args.cause },
    );
    this.lastEventId = args.lastEventId;
    this.attempts = args.attempts;
  }
}

/**
 * Not sent: the conversation is over the limits of `POST /v1/turns` (100 messages of 20,000 characters, counted
 * as Unicode code points), which the API would refuse with `400 invalid_field`. `field` names the
 * field as the API would (`messages`, `messages[3].content`).
 */
export class ConversationTooLongError extends AmyError {
  override name = 'ConversationTooLongError';
  override readonly code: string = 'invalid_field';
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** The caller's `signal` was aborted. Only the request or the watching stopped: a turn keeps running. */
export class APIUserAbortError extends AmyError {
  override name = 'APIUserAbortError';
  override readonly code: string = 'aborted';

  constructor() {
    super('The request was aborted.');
  }
}

/** The turn itself ended `failed` (`turn.failed`); `code` is the turn's error code, e.g. `upstream_unavailable`. */
export class TurnFailedError extends AmyError {
  override name = 'TurnFailedError';
  override readonly code: string;
  override readonly requestId: string | undefined;
  readonly turnId: string;
  readonly docsUrl: string | undefined;
  /** What the failed turn's model calls cost, failed attempts included. */
  readonly costUsd: number | undefined;

  constructor(turnId: string, error: ErrorBody, costUsd: number | undefined) {
    super(error.message);
    this.turnId = turnId;
    this.code = error.code;
    this.requestId = error.request_id;
    this.docsUrl = error.docs_url;
    this.costUsd = costUsd;
  }
}

export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
