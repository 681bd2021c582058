import { Router, type Request } from 'express';
import type { Pool } from 'pg';
import { externalIdSchema, fhirBundleSchema, upsertLabRowsRequestSchema } from '../../contracts/data';
import { ROUTES } from '../route-table';
import { ApiError, notFound } from '../errors';
import { parseRequest } from '../parse-request';
import {
  deleteDailyForUser,
  deleteLabsForUser,
  deleteWorkoutForUserOrThrow,
  listConnectionsForUser,
  listDailyForUser,
  listLabsForUser,
  listWorkoutsForUser,
  readProfileForUserOrThrow,
  upsertDailyForUser,
  upsertLabBundleForUser,
  upsertLabRowsForUser,
  upsertWorkoutsForUser,
  writeProfileForUser,
} from '../tables/data';

export interface DataRoutesDeps {
  pool: Pool;
}

/** A write's body, parsed with its contract; a body that is not JSON is refused before it is read. */
function jsonBody(req: Request) {
  if (!req.is('application/json')) {
    throw new ApiError('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json.');
  }
  return req.body ?? {};
}

const FHIR_JSON = 'application/fhir+json';

/**
 * A lab results body, as JSON or FHIR JSON. FHIR JSON is a bundle; so is a JSON object with a
 * `resourceType`, which must then be "Bundle" (a lone Observation is refused by that field).
 */
function labsBody(req: Request): { bundle: unknown } | { rows: unknown } {
  if (req.is(FHIR_JSON)) return { bundle: req.body ?? {} };
  const body: unknown = jsonBody(req);
  const fhir = typeof body === 'object' && body !== null && !Array.isArray(body) && 'resourceType' in body;
  return fhir ? { bundle: body } : { rows: body };
}

const externalIdFrom = (req: Request) => {
  const id = String(req.params.external_id);
  if (!externalIdSchema.safeParse(id).success) throw notFound('Workout');
  return id;
};

/**
 * The user's own health data (docs/api.md#health-data): daily summaries, workouts, lab results and the profile,
 * and the providers they connected through Terra.
 */
export function dataRoutes({ pool }: DataRoutesDeps): Router {
  const router = Router();
  const userOf = (res: { locals: Record<string, unknown> }) => res.locals.userId as string;

  router.post('/v1/data/daily', async (req, res) => {
    const body = parseRequest(ROUTES.upsertDaily.body, jsonBody(req), 'body');
    res.json(await upsertDailyForUser(pool, userOf(res), body));
  });

  router.get('/v1/data/daily', async (req, res) => {
    const query = parseRequest(ROUTES.listDaily.query, req.query, 'query');
    res.json(await listDailyForUser(pool, userOf(res), query));
  });

  router.delete('/v1/data/daily', async (req, res) => {
    const query = parseRequest(ROUTES.deleteDaily.query, req.query, 'query');
    res.json({ deleted: await deleteDailyForUser(pool, userOf(res), query) });
  });

  router.post('/v1/data/workouts', async (req, res) => {
    const body = parseRequest(ROUTES.upsertWorkouts.body, jsonBody(req), 'body');
    res.json(await upsertWorkoutsForUser(pool, userOf(res), body));
  });

  router.get('/v1/data/workouts', async (req, res) => {
    const query = parseRequest(ROUTES.listWorkouts.query, req.query, 'query');
    res.json(await listWorkoutsForUser(pool, userOf(res), query));
  });

  router.delete('/v1/data/workouts/:external_id', async (req, res) => {
    await deleteWorkoutForUserOrThrow(pool, userOf(res), externalIdFrom(req));
    res.status(204).end();
  });

  router.post('/v1/data/labs', async (req, res) => {
    const body = labsBody(req);
    res.json(
      'bundle' in body
        ? await upsertLabBundleForUser(pool, userOf(res), parseRequest(fhirBundleSchema, body.bundle, 'body'))
        : await upsertLabRowsForUser(pool, userOf(res), parseRequest(upsertLabRowsRequestSchema, body.rows, 'body')),
    );
  });

  router.get('/v1/data/labs', async (req, res) => {
    const query = parseRequest(ROUTES.listLabs.query, req.query, 'query');
    res.json(await listLabsForUser(pool, userOf(res), query));
  });

  router.delete('/v1/data/labs', async (req, res) => {
    const query = parseRequest(ROUTES.deleteLabs.query, req.query, 'query');
    res.json({ deleted: await deleteLabsForUser(pool, userOf(res), query) });
  });

  router.get('/v1/data/profile', async (_req, res) => {
    res.json(await readProfileForUserOrThrow(pool, userOf(res)));
  });

  router.put('/v1/data/profile', async (req, res) => {
    const body = parseRequest(ROUTES.putProfile.body, jsonBody(req), 'body');
    res.json(await writeProfileForUser(pool, userOf(res), body));
  });

  router.get('/v1/data/connections', async (_req, res) => {
    res.json(await listConnectionsForUser(pool, userOf(res)));
  });

  return router;
}
