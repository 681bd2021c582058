/**
 * Bearer API keys, checked against the database on every request (no cache, so a revoked key is
 * refused from the next request on). Browsers' EventSource cannot set headers, so the event stream
 * route alone (api/streaming/event-stream.ts) also takes `?api_key=`; the header wins when both are present.
 * Everywhere else a key in the URL is refused, on the routes that need no key too (/healthz,
 * /openapi.json, the console, the codec server) and on paths that are no route: URLs end up in access
 * logs, proxies and browser history, and a key that works in one URL gets pasted into others.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Pool } from 'pg';
import { checkApiKey } from '../platform/api-keys';
import { ApiError } from './errors';

/** Who is calling: the user, and which of their keys (limits such as open streams are per key). */
export interface Caller {
  userId: string;
  apiKeyId: string;
}

export async function authenticate(
  pool: Pool,
  credentials: { authorization: string | undefined; apiKeyParam: string | undefined },
  /** Whether a key revoked by its account's deletion may send this request: only the deletion, again. */
  resumesAccountDeletion = false,
): Promise<Caller> {
  let key: string | undefined;
  if (credentials.authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(credentials.authorization);
    if (!match) throw new ApiError('invalid_api_key', 'The Authorization header must be "Bearer <api key>".');
    key = match[1];
  } else if (credentials.apiKeyParam) {
    key = credentials.apiKeyParam;
  }
  if (!key) {
    throw new ApiError('authentication_required', 'Send your API key as "Authorization: Bearer <key>".', undefined, {
      'WWW-Authenticate': 'Bearer',
    });
  }
  const found = await checkApiKey(pool, key);
  if (found.status === 'revoked' && found.accountDeletion && resumesAccountDeletion) {
    return { userId: found.accountDeletion.userId, apiKeyId: found.id };
  }
  if (found.status === 'revoked') throw new ApiError('invalid_api_key', 'The API key has been revoked.');
  if (found.status === 'unknown') throw new ApiError('invalid_api_key', 'The API key is not valid.');
  return { userId: found.userId, apiKeyId: found.id };
}

const API_KEY_IN_URL_MESSAGE =
  '?api_key= is accepted only by GET /v1/turns/{id}/events, for browsers\' EventSource: send your key as "Authorization: Bearer <key>".';

/**
 * A refused request's body is never read: close the connection after the answer, so that a caller
 * still sending one cannot hold it open (Node would otherwise read and discard it).
 */
function refuse(req: Request, res: Response, next: NextFunction, err: unknown) {
  if (!req.complete) res.set('Connection', 'close');
  next(err);
}

/**
 * A key in the URL, refused on every route of the Express app: the event stream, the one route that
 * takes it, is served ahead of Express. The query is read as a server reads it, names percent-decoded
 * (`?api%5Fkey=` is the same parameter), whatever the app's query parser.
 */
export const refuseApiKeyInUrl: RequestHandler = (req, res, next) => {
  const query = req.originalUrl.indexOf('?');
  if (query === -1 || !new URLSearchParams(req.originalUrl.slice(query + 1)).has('api_key')) return next();
  refuse(
    req,
    res,
    next,
    new ApiError('authentication_required', API_KEY_IN_URL_MESSAGE, undefined, { 'WWW-Authenticate': 'Bearer' }),
  );
};

/**
 * `DELETE /v1/account` revokes every key of the account first (api/tables/account.ts); should it fail
 * half-way (Temporal away), the same request sent again with the same key finishes it.
 */
const resumesAccountDeletion = (req: Request) => req.method === 'DELETE' && req.path === '/account';

export function requireApiKey(pool: Pool): RequestHandler {
  return async (req, res, next) => {
    try {
      const caller = await authenticate(
        pool,
        { authorization: req.get('authorization'), apiKeyParam: undefined },
        resumesAccountDeletion(req),
      );
      res.locals.userId = caller.userId;
      res.locals.apiKeyId = caller.apiKeyId;
      next();
    } catch (err) {
      refuse(req, res, next, err);
    }
  };
}
