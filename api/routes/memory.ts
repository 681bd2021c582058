import { Router, type Request } from 'express';
import type { Pool } from 'pg';
import { isMemoryId } from '../../contracts/memory';
import { ROUTES } from '../route-table';
import { ApiError, notFound } from '../errors';
import { createMemoryForUser, deleteMemoryForUserOrThrow, listMemoryForUser } from '../tables/memory';
import { parseRequest } from '../parse-request';

export interface MemoryRoutesDeps {
  pool: Pool;
}

const memoryIdFrom = (req: Request) => {
  const id = String(req.params.id);
  if (!isMemoryId(id)) throw notFound('Memory entry');
  return id;
};

export function memoryRoutes({ pool }: MemoryRoutesDeps): Router {
  const router = Router();

  router.get('/v1/memory', async (req, res) => {
    const query = parseRequest(ROUTES.listMemory.query, req.query, 'query');
    res.json(await listMemoryForUser(pool, res.locals.userId as string, query));
  });

  router.post('/v1/memory', async (req, res) => {
    if (!req.is('application/json')) {
      throw new ApiError(
        'unsupported_media_type',
        'Send the request body as JSON with Content-Type: application/json.',
      );
    }
    const body = parseRequest(ROUTES.createMemory.body, req.body ?? {}, 'body');
    res.status(201).json(await createMemoryForUser(pool, res.locals.userId as string, body));
  });

  router.delete('/v1/memory/:id', async (req, res) => {
    await deleteMemoryForUserOrThrow(pool, res.locals.userId as string, memoryIdFrom(req));
    res.status(204).end();
  });

  return router;
}
