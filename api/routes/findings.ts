/** A turn's findings: the series each was computed from (api/temporal/finding-series.ts). */
import { Router } from 'express';
import { isTurnId } from '../../contracts/ids';
import { notFound } from '../errors';
import { findingSeriesForUser, type FindingSeriesDeps } from '../temporal/finding-series';

/** Finding ids are short (`ds-001`, `inv-association-<feature>-<target>`); a longer one names none. */
const MAX_FINDING_ID_CHARS = 500;

export function findingRoutes(deps: FindingSeriesDeps): Router {
  const router = Router();
  router.get('/v1/turns/:id/findings/:finding_id/series', async (req, res) => {
    const turnId = String(req.params.id);
    if (!isTurnId(turnId)) throw notFound('Turn');
    const findingId = String(req.params.finding_id);
    if (findingId.length > MAX_FINDING_ID_CHARS) throw notFound('Finding');
    res.json(await findingSeriesForUser(deps, { userId: res.locals.userId as string, turnId, findingId }));
  });
  return router;
}
