import type { RequestHandler } from 'express';
import type { Pool } from 'pg';
import { API_KEY_PREFIX, hashApiKey } from '../platform/users';
import { ApiError } from './errors';

/**
 * Bearer API keys. Browsers' EventSource cannot set headers, so `?api_key=` is accepted as well
 * (seed 001); the header wins when both are present. One indexed query on the key's SHA-256.
 */
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
  const found = key.startsWith(API_KEY_PREFIX)
    ? await pool.query<{ id: string; user_id: string }>('SELECT id, user_id FROM api_keys WHERE key_hash = $1', [
        hashApiKey(key),
      ])
    : null;
  const row = found?.rows[0];
  if (!row) throw new ApiError('invalid_api_key', 'The API key is not valid.');
  return { userId: row.user_id, apiKeyId: row.id };
}

export function requireApiKey(pool: Pool): RequestHandler {
  return async (req, res, next) => {
    try {
      const caller = await authenticate(pool, {
        authorization: req.get('authorization'),
        apiKeyParam: typeof req.query.api_key === 'string' ? req.query.api_key : undefined,
      });
      res.locals.userId = caller.userId;
      res.locals.apiKeyId = caller.apiKeyId;
      next();
    } catch (err) {
      next(err);
    }
  };
}
