/**
 * A user's health data in Postgres (profile, daily summaries, workouts, lab results), written and read as
 * the rows of contracts/health-records.ts. The read functions give the rows as they are now; a turn's activities read its
 * snapshot instead (./snapshot.ts), so that every step of a turn sees the same rows. Calendar days cross the SQL boundary as `YYYY-MM-DD` text both ways (`::date`
 * in, `to_char` out): node-pg would turn a `date` into local midnight, a day off east of UTC.
 */
import type { Pool } from 'pg';
import { newId, ulid } from '../ids';
import { inTransaction } from '../pg-pool';
import {
  DAILY_METRICS,
  METRIC_SPECS,
  type BiomarkerRow,
  type DailyRow,
  type HealthData,
  type HealthProfileRow,
  type WorkoutRow,
} from '../../contracts/health-records';

// Lab results need ids of their own; this prefix belongs in contracts/ids.ts (ID_PREFIXES), as the workouts' does.
const LAB_RESULT_ID_PREFIX = 'lab_';

export interface HealthDataCounts {
  days: number;
  workouts: number;
  biomarkers: number;
}

/** The daily metrics are the table's column names, as in DailyRow. */
const DAILY_COLUMNS = DAILY_METRICS.join(', ');
const DAILY_RECORD = DAILY_METRICS.map((metric) => `${metric} ${METRIC_SPECS[metric].integer ? 'int' : 'float8'}`);
const DAY = (column: string) => `to_char(${column}, 'YYYY-MM-DD')`;

/** Replaces everything the user had, in one transaction: readers see the old data set or the new one. */
export async function replaceUserHealthData(pool: Pool, userId: string, data: HealthData): Promise<HealthDataCounts> {
  const { profile } = data;
  // Each table's rows travel as one JSON array: one statement per table, whatever the number of rows.
  const rows = (items: object[]) => JSON.stringify(items);
  await inTransaction(pool, async (client) => {
    for (const table of ['daily_summaries', 'workouts', 'lab_biomarkers', 'health_profiles']) {
      await client.query(`DELETE FROM ${table} WHERE user_id = $1`, [userId]);
    }
    await client.query(
      'INSERT INTO health_profiles (user_id, sex, birth_year, height_cm, weight_kg) VALUES ($1, $2, $3, $4, $5)',
      [userId, profile.sex, profile.birth_year, profile.height_cm, profile.weight_kg],
    );
    await client.query(
      `INSERT INTO daily_summaries (user_id, date, ${DAILY_COLUMNS})
       SELECT $1, d.date, ${DAILY_METRICS.map((metric) => `d.${metric}`).join(', ')}
       FROM jsonb_to_recordset($2::jsonb) AS d (date date, ${DAILY_RECORD.join(', ')})`,
      [userId, rows(data.daily)],
    );
    // A generated workout has no client of its own: its id is also its external id.
    await client.query(
      `INSERT INTO workouts
         (id, external_id, user_id, date, type, duration_minutes, distance_km, calories, avg_heart_rate)
       SELECT w.id, w.id, $1, w.date, w.type, w.duration_minutes, w.distance_km, w.calories, w.avg_heart_rate
       FROM jsonb_to_recordset($2::jsonb) AS w (id text, date date, type text, duration_minutes int,
         distance_km float8, calories int, avg_heart_rate float8)`,
      [userId, rows(data.workouts.map((w) => ({ id: newId('workout'), ...w })))],
    );
    await client.query(
      `INSERT INTO lab_biomarkers (id, user_id, taken_on, name, value, unit)
       SELECT b.id, $1, b.taken_on, b.name, b.value, b.unit
       FROM jsonb_to_recordset($2::jsonb) AS b (id text, taken_on date, name text, value float8, unit text)`,
      [userId, rows(data.biomarkers.map((b) => ({ id: LAB_RESULT_ID_PREFIX + ulid(), ...b })))],
    );
  });
  return { days: data.daily.length, workouts: data.workouts.length, biomarkers: data.biomarkers.length };
}

/** Whether the user has any daily summary at all (the demo is seeded once). */
export async function hasDailySummaries(pool: Pool, userId: string): Promise<boolean> {
  const { rowCount } = await pool.query('SELECT 1 FROM daily_summaries WHERE user_id = $1 LIMIT 1', [userId]);
  return rowCount !== 0;
}

export async function readHealthProfile(pool: Pool, userId: string): Promise<HealthProfileRow | null> {
  const { rows } = await pool.query<HealthProfileRow>(
    'SELECT sex, birth_year, height_cm, weight_kg FROM health_profiles WHERE user_id = $1',
    [userId],
  );
  return rows[0] ?? null;
}

/** Writes the user's profile, replacing the one they had. */
export async function writeHealthProfile(pool: Pool, userId: string, profile: HealthProfileRow): Promise<void> {
  await pool.query(
    `INSERT INTO health_profiles (user_id, sex, birth_year, height_cm, weight_kg) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (user_id) DO UPDATE SET sex = EXCLUDED.sex, birth_year = EXCLUDED.birth_year,
       height_cm = EXCLUDED.height_cm, weight_kg = EXCLUDED.weight_kg`,
    [userId, profile.sex, profile.birth_year, profile.height_cm, profile.weight_kg],
  );
}

/** Every lab result of the user, newest first (by the day taken, then id). */
export async function readLabResults(pool: Pool, userId: string): Promise<BiomarkerRow[]> {
  const { rows } = await pool.query<BiomarkerRow>(
    `SELECT ${DAY('taken_on')} AS taken_on, name, value, unit FROM lab_biomarkers WHERE user_id = $1
     ORDER BY lab_biomarkers.taken_on DESC, id DESC`,
    [userId],
  );
  return rows;
}

/** What the analysis of a user's data reads: the daily summaries and workouts oldest first, and the profile. */
export interface UserHealthData {
  profile: HealthProfileRow | null;
  daily: DailyRow[];
  workouts: WorkoutRow[];
}

export async function readUserHealthData(pool: Pool, userId: string): Promise<UserHealthData> {
  const [profile, daily, workouts] = await Promise.all([
    readHealthProfile(pool, userId),
    pool.query<DailyRow>(
      `SELECT ${DAY('date')} AS date, ${DAILY_COLUMNS} FROM daily_summaries WHERE user_id = $1
       ORDER BY daily_summaries.date`,
      [userId],
    ),
    pool.query<WorkoutRow>(
      `SELECT ${DAY('date')} AS date, type, duration_minutes, distance_km, calories, avg_heart_rate FROM workouts
       WHERE user_id = $1 ORDER BY workouts.date, id`,
      [userId],
    ),
  ]);
  return { profile, daily: daily.rows, workouts: workouts.rows };
}
