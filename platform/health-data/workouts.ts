/**
 * A user's workouts under the clients' own ids: the upsert by `external_id` (the same id twice is one
 * workout, updated), pages oldest first, and deletion by external id. Rows reach here already validated
 * (./validate.ts). Each workout keeps an id of our own (`wko_<ULID>`) beside its external id.
 */
import type { Pool } from 'pg';
import { newId } from '../ids';
import type { WorkoutRecord, WorkoutType } from '../../contracts/health-records';
import type { DayRange } from './daily-summaries';

const FIELDS = 'date, type, duration_minutes, distance_km, calories, avg_heart_rate';

/** Upserts by (user, external_id) in one statement: the whole request is stored, or none of it. */
export async function upsertWorkouts(
  pool: Pick<Pool, 'query'>,
  userId: string,
  rows: readonly WorkoutRecord[],
): Promise<{ inserted: number; updated: number }> {
  if (rows.length === 0) return { inserted: 0, updated: 0 };
  const written = await pool.query<{ inserted: boolean }>(
    `INSERT INTO workouts (id, user_id, external_id, ${FIELDS})
     SELECT w.id, $1, w.external_id, w.date, w.type, w.duration_minutes, w.distance_km, w.calories, w.avg_heart_rate
     FROM jsonb_to_recordset($2::jsonb) AS w (id text, external_id text, date date, type text,
       duration_minutes int, distance_km float8, calories int, avg_heart_rate float8)
     ON CONFLICT (user_id, external_id) DO UPDATE SET
       date = EXCLUDED.date, type = EXCLUDED.type, duration_minutes = EXCLUDED.duration_minutes,
       distance_km = EXCLUDED.distance_km, calories = EXCLUDED.calories, avg_heart_rate = EXCLUDED.avg_heart_rate
     RETURNING (xmax = 0) AS inserted`,
    [userId, JSON.stringify(rows.map((row) => ({ id: newId('workout'), ...row })))],
  );
  const inserted = written.rows.filter((row) => row.inserted).length;
  return { inserted, updated: written.rows.length - inserted };
}

/** Where a page of workouts ends: the last one's day and external id (the order is date, then external id). */
export interface WorkoutPosition {
  date: string;
  externalId: string;
}

/** One page of the user's workouts, oldest first, after `after`; optionally of one type and within days. */
export async function listWorkoutsPage(
  pool: Pool,
  userId: string,
  query: DayRange & { type?: WorkoutType; after?: WorkoutPosition; limit: number },
): Promise<{ rows: WorkoutRecord[]; hasMore: boolean }> {
  const { rows } = await pool.query<WorkoutRecord>(
    `SELECT external_id, to_char(date, 'YYYY-MM-DD') AS date, type, duration_minutes, distance_km, calories,
            avg_heart_rate
     FROM workouts
     WHERE user_id = $1 AND ($2::text IS NULL OR type = $2) AND ($3::date IS NULL OR date >= $3::date)
       AND ($4::date IS NULL OR date <= $4::date)
       AND ($5::date IS NULL OR (date, external_id) > ($5::date, $6::text))
     ORDER BY date, external_id LIMIT $7`,
    [
      userId,
      query.type ?? null,
      query.from ?? null,
      query.to ?? null,
      query.after?.date ?? null,
      query.after?.externalId ?? null,
      query.limit + 1,
    ],
  );
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

/** Deletes the user's workout with this external id; false when there is none. */
export async function deleteWorkout(pool: Pool, userId: string, externalId: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM workouts WHERE user_id = $1 AND external_id = $2', [
    userId,
    externalId,
  ]);
  return rowCount === 1;
}
