/**
 * A finding's series for a chart (GET /v1/turns/{id}/findings/{finding_id}/series): the finding's spec, the
 * turn's snapshot of the user's data, and the gates process that cut the series the gates judged, asked to
 * cut it again, so the windowing rules stay in one place (gates-py/gates/finding_series.py).
 *
 * The spec (kind, feature, target, window, statistic, offset) is kept by no table: the Turn's result holds no
 * findings. It is read from the turn's workflow history, as the input of the `runGates` activity that judged
 * the finding; so it is there as long as Temporal keeps the history (the namespace's retention period).
 */
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import { readPayload } from '../../platform/temporal/read-payload';
import type { Pool } from 'pg';
import type { AgentFinding } from '../../contracts/findings';
import type { FindingSeriesResponse } from '../../contracts/finding-series';
import { seriesSpec, type GatesRunner } from '../../platform/gates';
import { readTurnHealthData } from '../../platform/health-data/snapshot';
import { ApiError, notFound } from '../errors';
import { getTurnForUserOrThrow } from '../tables/turns';

export interface FindingSeriesDeps {
  pool: Pool;
  temporal: TemporalClient;
  /** Absent where the API runs without the gates process (some tests): the route then answers 503. */
  gates?: Pick<GatesRunner, 'buildSeries'>;
}

/** The activity that judges a turn's findings; its input is `{ turnId, userId, findings: AgentFinding[] }`. */
const RUN_GATES_ACTIVITY = 'runGates';

/** The finding with this id among those the turn's gates ran on, null when there is none. */
async function gatedFinding(temporal: TemporalClient, turnId: string, findingId: string): Promise<AgentFinding | null> {
  const handle = temporal.workflow.getHandle(turnId);
  try {
    // describe() reports an unknown (or expired) workflow as WorkflowNotFoundError; fetchHistory() would not.
    await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  const history = await handle.fetchHistory();
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== RUN_GATES_ACTIVITY) continue;
    const payload = scheduled.input?.payloads?.[0];
    if (!payload) continue;
    const input = await readPayload<{ findings?: AgentFinding[] }>(temporal, payload);
    const found = input.findings?.find((f) => f.finding.id === findingId);
    if (found) return found;
  }
  return null;
}

async function hasSnapshot(pool: Pool, turnId: string, userId: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM turn_data_snapshots WHERE turn_id = $1 AND user_id = $2', [
    turnId,
    userId,
  ]);
  return (rowCount ?? 0) > 0;
}

export async function findingSeriesForUser(
  deps: FindingSeriesDeps,
  { userId, turnId, findingId }: { userId: string; turnId: string; findingId: string },
): Promise<FindingSeriesResponse> {
  await getTurnForUserOrThrow(deps.pool, userId, turnId);
  // Only a snapshot that exists is read: readTurnHealthData would take one for a turn that never read the data.
  if (!(await hasSnapshot(deps.pool, turnId, userId))) throw notFound('Finding');
  const agentFinding = await gatedFinding(deps.temporal, turnId, findingId);
  if (!agentFinding) throw notFound('Finding');
  if (!deps.gates) throw new ApiError('service_unavailable', 'The gates process is not available to this API.');
  const data = await readTurnHealthData(deps.pool, { turnId, userId });
  const { finding, statistic } = agentFinding;
  const [{ series }] = await deps.gates.buildSeries(data, [seriesSpec(agentFinding)]);

  // Every value carries its day (rule 7 of finding_series.py): a calendar day, or a workout's or a panel's.
  const dates = series.dates ?? [];
  const length = series.feature_values.length;
  const dateAt = (i: number) => dates[i];
  const lastDay = length > 0 ? dateAt(length - 1) : null;
  const points =
    finding.kind === 'association'
      ? series.feature_values.map((x, i) => ({ date: dateAt(i), x, y: series.target_values?.[i] ?? null }))
      : series.feature_values.map((value, i) => ({ date: dateAt(i), value }));
  const recentStart = series.recent_start;
  return {
    turn_id: turnId,
    finding_id: finding.id,
    kind: finding.kind,
    statistic: statistic ?? null,
    feature: finding.feature,
    target: finding.target,
    unit: finding.unit ?? null,
    window: finding.window,
    first_day: lastDay && dateAt(0),
    last_day: lastDay,
    recent_from: lastDay && recentStart !== undefined && recentStart < length ? dateAt(recentStart) : null,
    points,
  };
}
