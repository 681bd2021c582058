/**
 * What an Investigator scan usually costs and takes, for the confirmation a turn asks before one
 * (workflows/investigator-confirmation.ts): the median of the deployment's recent completed scans, read from
 * their results (`cost_usd`, `duration_ms`, the ledger's and the clock's figures). Until there are enough of them,
 * starting figures: a scan's duration as measured under a real model's pacing (about 51 s for its six model
 * calls), and a cost guessed for those calls at list prices, which the deployment's own scans soon replace.
 */
import type { Pool } from 'pg';
import type { InputRequest } from '../../contracts/interaction';

type Estimate = NonNullable<InputRequest['estimate']>;

/** Fewer recent scans than this, and the measured figures stand in. */
const MIN_SCANS = 5;
const RECENT_SCANS = 50;
/** The starting figures (see the module comment). */
const MEASURED: Estimate = { cost_usd: 0.25, duration_seconds: 51 };

export async function estimateInvestigatorScan(pool: Pick<Pool, 'query'>): Promise<Estimate> {
  const { rows } = await pool.query<{ scans: string; cost: string | null; duration_ms: string | null }>(
    `WITH recent AS (
       SELECT (result->>'cost_usd')::numeric AS cost, (result->>'duration_ms')::numeric AS duration_ms
       FROM turns
       WHERE status = 'completed' AND result->'agents_used' @> '["investigator"]'::jsonb
       ORDER BY completed_at DESC LIMIT ${RECENT_SCANS})
     SELECT count(*)::text AS scans,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY cost)::text AS cost,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::text AS duration_ms
     FROM recent`,
  );
  const { scans, cost, duration_ms: durationMs } = rows[0];
  if (Number(scans) < MIN_SCANS || cost === null || durationMs === null) return MEASURED;
  return {
    cost_usd: Math.round(Number(cost) * 10_000) / 10_000,
    duration_seconds: Math.round(Number(durationMs) / 1000),
  };
}
