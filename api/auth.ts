import type { RequestHandler } from 'express';
import type { Db } from '../activities/services/db';
import { findUserIdByApiKey } from '../activities/services/users';
import { ApiError } from './errors';

/**
 * Bearer API keys. Browsers' EventSource cannot set headers, so `?api_key=` is accepted as well
 * (seed 001); the header wins when both are present.
 */
export function requireApiKey(db: Db): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    let key: string | undefined;
    if (header) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) return next(new ApiError('invalid_api_key', 'The Authorization header must be "Bearer <api key>".'));
      key = match[1];
    } else if (typeof req.query.api_key === 'string' && req.query.api_key !== '') {
      key = req.query.api_key;
    }
    if (!key) {
      return next(
        new ApiError('authentication_required', 'Send your API key as "Authorization: Bearer <key>".', undefined, {
          'WWW-Authenticate': 'Bearer',
        }),
      );
    }
    try {
      const userId = await findUserIdByApiKey(db, key);
      if (!userId) return next(new ApiError('invalid_api_key', 'The API key is not valid.'));
      res.locals.userId = userId;
      next();
    } catch (err) {
      next(err);
    }
  };
}
