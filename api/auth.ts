/**
 * Bearer API keys, checked against the database on every request (no cache, so a revoked key is
 * refused from the next request on). Browsers' EventSource cannot set headers, so the event stream
 * route alone (api/event-stream.ts) also takes `?api_key=`; the header wins when both are present.
 * Everywhere else a key in the URL is refused: URLs end up in access logs, proxies and browser history.
 */
import type { RequestHandler } from 'express';
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
  if (found.status === 'revoked') throw new ApiError('invalid_api_key', 'The API key has been revoked.');
  if (found.status === 'unknown') throw new ApiError('invalid_api_key', 'The API key is not valid.');
  return { userId: found.userId, apiKeyId: found.id };
}

const API_KEY_IN_URL_MESSAGE =
  '?api_key= is accepted only by GET /v1/turns/{id}/events, for browsers\' EventSource: send your key as "Authorization: Bearer <key>".';

export function requireApiKey(pool: Pool): RequestHandler {
  return async (req, res, next) => {
    try {
      if (req.query.api_key !== undefined) {
        throw new ApiError('authentication_required', API_KEY_IN_URL_MESSAGE, undefined, {
          'WWW-Authenticate': 'Bearer',
        });
      }
      const caller = await authenticate(pool, { authorization: req.get('authorization'), apiKeyParam: undefined });
      res.locals.userId = caller.userId;
      res.locals.apiKeyId = caller.apiKeyId;
      next();
    } catch (err) {
      // A refused request's body is never read: close the connection after the answer, so that a
      // caller still sending one cannot hold it open (Node would otherwise read and discard it).
      if (!req.complete) res.set('Connection', 'close');
      next(err);
    }
  };
}
