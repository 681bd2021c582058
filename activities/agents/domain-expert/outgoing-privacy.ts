/**
 * What must not leave the service in a network tool's query (checks/outgoing-query-guard.ts), gathered once per
 * consultation: the memory the model was shown, the user's own messages of this turn, every value of the turn's
 * snapshot of their data, and what names them. The contract: memory is never sent to a third party but the model,
 * and a PubMed lookup never includes it; neither does any other query, nor the user's words or numbers.
 */
import type { Pool } from 'pg';
import type { UserValue } from '../../../checks/outgoing-query-guard';
import { DAILY_METRICS } from '../../../contracts/health-records';
import { readTurnHealthData } from '../../../platform/health-data/snapshot';

export interface OutgoingPrivacy {
  memoryTexts: string[];
  userMessages: string[];
  userValues: UserValue[];
  userIdentifiers: string[];
}

/** The memory summary the model was shown, one entry per line (its bullets dropped). */
const memoryEntries = (memory: string | undefined) =>
  (memory ?? '')
    .split('\n')
    .map((line) => line.replace(/^\s*[-*•]\s*/, '').trim())
    .filter((line) => line !== '');

export async function readOutgoingPrivacy(
  pool: Pool,
  ref: { turnId: string; userId: string; memory?: string },
): Promise<OutgoingPrivacy> {
  const [turn, user, data] = await Promise.all([
    pool.query<{ messages: { role: string; content: string }[] }>(
      'SELECT messages FROM turns WHERE id = $1 AND user_id = $2',
      [ref.turnId, ref.userId],
    ),
    pool.query<{ id: string; name: string }>('SELECT id, name FROM users WHERE id = $1', [ref.userId]),
    readTurnHealthData(pool, { turnId: ref.turnId, userId: ref.userId }),
  ]);
  const userValues: UserValue[] = [];
  const salient = (value: number | null | undefined) => {
    if (typeof value === 'number' && Number.isFinite(value)) userValues.push({ value, kind: 'salient' });
  };
  const row = (value: number | null | undefined) => {
    if (typeof value === 'number' && Number.isFinite(value)) userValues.push({ value, kind: 'row' });
  };
  if (data.profile) {
    salient(data.profile.birth_year);
    salient(data.profile.height_cm);
    salient(data.profile.weight_kg);
  }
  for (const lab of data.labs) salient(lab.value);
  for (const day of data.daily) for (const metric of DAILY_METRICS) row(day[metric]);
  for (const workout of data.workouts) {
    row(workout.duration_minutes);
    row(workout.distance_km);
    row(workout.calories);
    row(workout.avg_heart_rate);
  }
  return {
    memoryTexts: memoryEntries(ref.memory),
    userMessages: (turn.rows[0]?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content),
    userValues,
    userIdentifiers: user.rows.flatMap((u) => [u.id, u.name]),
  };
}
