/** A turn's findings: the series each was computed from (api/services/finding-series.ts). */
import { Router } from 'express';
import { isTurnId } from '../../contracts/ids';
import { notFound } from '../errors';
import { findingSeriesForUser, type FindingSeriesDeps } from '../services/finding-series';

/** Finding ids are short names the Data Science code and the Investigator give (`f1`, `h_sleep_hrv`). */
const FINDING_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

export function findingRoutes(deps: FindingSeriesDeps): Router {
  const router = Router();
  router.get('/v1/turns/:id/findings/:finding_id/series', async (req, res) => {
    const turnId = String(req.params.id);
    if (!isTurnId(turnId)) throw notFound('Turn');
    const findingId = String(req.params.finding_id);
    if (!FINDING_ID.test(findingId)) throw notFound('Finding');
    res.json(await findingSeriesForUser(deps, { userId: res.locals.userId as string, turnId, findingId }));
  });
  return router;
}
