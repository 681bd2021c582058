/**
 * One error hierarchy for the API: each error has a stable `code` and its HTTP status; the final
 * middleware turns anything thrown into the documented envelope and never leaks internals on a 500.
 */
import type { ErrorRequestHandler } from 'express';
import { ERROR_STATUS, docsUrl, type ApiErrorCode, type ErrorBody } from '../contracts/errors';
import type { Logger } from '../platform/logger';
import { metrics } from '../platform/metrics';

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new ApiError('not_found', `${what} not found.`);

function errorBody(code: ApiErrorCode, message: string, requestId: string, field?: string): ErrorBody {
  return { code, message, request_id: requestId, docs_url: docsUrl(code), ...(field ? { field } : {}) };
}

/** body-parser's own errors (malformed JSON, oversized body, bad charset) carry a `type`. */
function fromBodyParser(err: { type?: string; limit?: number }): ApiError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return new ApiError('invalid_json', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new ApiError(
        'payload_too_large',
        `The request body exceeds the ${err.limit ?? ''} byte limit.`.replace('  ', ' '),
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'The request body must be UTF-8 JSON.');
    default:
      // Other client errors raised before a route runs, as http-errors with status 400: a body that
      // does not decompress or does not match its Content-Length, a path that is not valid
      // percent-encoding (the router's URIError). The client's fault, never a 500.
      if ((err as { status?: unknown }).status !== 400) return null;
      return new ApiError(
        'invalid_request',
        err instanceof URIError
          ? 'The URL is not valid percent-encoding.'
          : 'The request body could not be read: it does not decompress or does not match its Content-Length.',
      );
  }
}

/**
 * Any thrown value as the documented envelope; unknown errors become a 500 that leaks nothing. Every error
 * answer of the API passes here, so here each is counted by its code (`amy_api_errors_total`).
 */
export function errorResponse(
  err: unknown,
  requestId: string,
  logger: Logger,
  where: { method?: string; path?: string } = {},
): { status: number; code: ApiErrorCode; headers: Record<string, string>; body: { error: ErrorBody } } {
  const apiError = err instanceof ApiError ? err : fromBodyParser(err as { type?: string });
  if (apiError) {
    metrics.apiErrorAnswered(apiError.code);
    return {
      status: apiError.status,
      code: apiError.code,
      headers: apiError.headers,
      body: { error: errorBody(apiError.code, apiError.message, requestId, apiError.field) },
    };
  }
  metrics.apiErrorAnswered('internal_error');
  logger.error('unhandled error', {
    request_id: requestId,
    ...where,
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  return {
    status: 500,
    code: 'internal_error',
    headers: {},
    body: { error: errorBody('internal_error', 'Something went wrong on our side.', requestId) },
  };
}

export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const requestId = res.locals.requestId as string;
    if (res.headersSent) {
      logger.error('error after response started', { request_id: requestId, error: String(err) });
      res.end();
      return;
    }
    const { status, headers, body } = errorResponse(err, requestId, logger, { method: req.method, path: req.path });
    res.set(headers).status(status).json(body);
  };
}
