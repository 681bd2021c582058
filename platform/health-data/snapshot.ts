/**
 * One view of the user's health data per turn (docs/design.md#one-snapshot-of-the-users-data-per-turn). The
 * first activity of a turn that reads the user's data copies their daily summaries, workouts, lab results and
 * profile into `turn_data_snapshots`, and every activity of the turn reads that copy: the plan's dates, the
 * sandbox run, the gates' reproduction, the Investigator, the coach's anchors and the Domain Expert's profile
 * all compute over the same rows, however the user's data changes while the turn runs. A retried activity, a
 * parallel branch and a turn retried by an operator find the snapshot already there and read it unchanged.
 *
 * The copy is one INSERT … SELECT: one statement sees one snapshot of the database, so an upload that commits
 * while it runs is wholly in it or wholly out. ON CONFLICT DO NOTHING makes the first of two racing copies the
 * one that stands (the second waits on the key, then inserts nothing and reads the first).
 *
 * A turn that says `context.include_biomarkers: false` gets a snapshot without lab results, marked withheld
 * (docs/design.md#lab-results-left-out-of-a-turn). The flag is applied here, once, and not by each step: every
 * step reads the user's data through this snapshot, so none of them, nor one added later, can hand a lab value
 * to the model, the sandbox or the gates.
 */
import type { Pool } from 'pg';
import {
  DAILY_METRICS,
  type BiomarkerRow,
  type DailyRow,
  type HealthProfileRow,
  type WorkoutRow,
} from '../../contracts/health-records';
import type { UserHealthData } from './store';

/** The turn whose snapshot is read, and its user: a snapshot is only ever of the turn's own user's data. */
export interface TurnDataRef {
  turnId: string;
  userId: string;
}

/** What a turn computes over: its user's data as the snapshot holds it (labs newest first). */
export interface TurnHealthData extends UserHealthData {
  labs: BiomarkerRow[];
  /** The turn said `include_biomarkers: false`: `labs` is empty because the user's lab results were left out. */
  labsWithheld: boolean;
}

/** Thrown when the turn is not the user's (or does not exist): there is nothing of theirs to read. */
export class TurnDataSnapshotError extends Error {
  override name = 'TurnDataSnapshotError';
}

const DAY = (column: string) => `to_char(${column}, 'YYYY-MM-DD')`;
const fields = (names: readonly string[], row: string) => names.map((name) => `'${name}', ${row}.${name}`).join(', ');
const DAILY_FIELDS = `'date', ${DAY('d.date')}, ${fields(DAILY_METRICS, 'd')}`;
const WORKOUT_FIELDS = `'date', ${DAY('w.date')}, ${fields(['type', 'duration_minutes', 'distance_km', 'calories', 'avg_heart_rate'], 'w')}`;
const LAB_FIELDS = `'taken_on', ${DAY('b.taken_on')}, ${fields(['name', 'value', 'unit'], 'b')}`;
const PROFILE_FIELDS = fields(['sex', 'birth_year', 'height_cm', 'weight_kg'], 'p');

/**
 * The user's rows as they are now, in the order the live reads give them, as one row of the snapshot table; their
 * lab results only when the turn's context lets them in (a context stored without the flag means the default, true).
 */
const TAKE_SNAPSHOT = `
  INSERT INTO turn_data_snapshots
    (turn_id, user_id, daily, workouts, labs, profile, daily_rows, workout_rows, lab_rows, labs_withheld)
  SELECT t.id, t.user_id, daily.rows, workouts.rows, labs.rows, profile.row, daily.n, workouts.n, labs.n,
         NOT biomarkers.included
  FROM turns t
  CROSS JOIN LATERAL (
    SELECT COALESCE((t.context->>'include_biomarkers')::boolean, true) AS included) biomarkers
  CROSS JOIN LATERAL (
    SELECT COALESCE(jsonb_agg(jsonb_build_object(${DAILY_FIELDS}) ORDER BY d.date), '[]'::jsonb) AS rows,
           count(*)::int AS n
    FROM daily_summaries d WHERE d.user_id = t.user_id) daily
  CROSS JOIN LATERAL (
    SELECT COALESCE(jsonb_agg(jsonb_build_object(${WORKOUT_FIELDS}) ORDER BY w.date, w.id), '[]'::jsonb) AS rows,
           count(*)::int AS n
    FROM workouts w WHERE w.user_id = t.user_id) workouts
  CROSS JOIN LATERAL (
    SELECT COALESCE(jsonb_agg(jsonb_build_object(${LAB_FIELDS}) ORDER BY b.taken_on DESC, b.id DESC), '[]'::jsonb) AS rows,
           count(*)::int AS n
    FROM lab_biomarkers b WHERE b.user_id = t.user_id AND biomarkers.included) labs
  LEFT JOIN LATERAL (
    SELECT jsonb_build_object(${PROFILE_FIELDS}) AS row FROM health_profiles p WHERE p.user_id = t.user_id) profile ON true
  WHERE t.id = $1 AND t.user_id = $2
  ON CONFLICT (turn_id) DO NOTHING
  RETURNING user_id, daily, workouts, labs, profile, labs_withheld`;

interface SnapshotRow {
  user_id: string;
  daily: DailyRow[];
  workouts: WorkoutRow[];
  labs: BiomarkerRow[];
  profile: HealthProfileRow | null;
  labs_withheld: boolean;
}

async function selectSnapshot(pool: Pool, turnId: string): Promise<SnapshotRow | null> {
  const { rows } = await pool.query<SnapshotRow>(
    'SELECT user_id, daily, workouts, labs, profile, labs_withheld FROM turn_data_snapshots WHERE turn_id = $1',
    [turnId],
  );
  return rows[0] ?? null;
}

/** jsonb keeps an object's keys in an order of its own: the rows go back to the records' field order. */
function dailyRow(row: DailyRow): DailyRow {
  const ordered = { date: row.date } as DailyRow;
  for (const metric of DAILY_METRICS) ordered[metric] = row[metric] ?? null;
  return ordered;
}

const workoutRow = (w: WorkoutRow): WorkoutRow => ({
  date: w.date,
  type: w.type,
  duration_minutes: w.duration_minutes,
  // Snapshots taken before distances were copied have none.
  distance_km: w.distance_km ?? null,
  calories: w.calories,
  avg_heart_rate: w.avg_heart_rate,
});

const labRow = (b: BiomarkerRow): BiomarkerRow => ({
  taken_on: b.taken_on,
  name: b.name,
  value: b.value,
  unit: b.unit,
});

const profileRow = (p: HealthProfileRow | null): HealthProfileRow | null =>
  p && { sex: p.sex, birth_year: p.birth_year, height_cm: p.height_cm, weight_kg: p.weight_kg };

/**
 * The turn's snapshot of its user's data, taken now if the turn has none yet. Every activity of a turn reads
 * the user's data through here, never from the live tables.
 */
export async function readTurnHealthData(pool: Pool, { turnId, userId }: TurnDataRef): Promise<TurnHealthData> {
  let row = await selectSnapshot(pool, turnId);
  if (!row) {
    // The snapshot as taken comes back with it; a parallel step that took it first leaves it to be read.
    const taken = await pool.query<SnapshotRow>(TAKE_SNAPSHOT, [turnId, userId]);
    row = taken.rows[0] ?? (await selectSnapshot(pool, turnId));
  }
  if (!row || row.user_id !== userId) {
    throw new TurnDataSnapshotError(`turn ${turnId} is not a turn of user ${userId}: it has no data to read`);
  }
  return {
    profile: profileRow(row.profile),
    daily: row.daily.map(dailyRow),
    workouts: row.workouts.map(workoutRow),
    labs: row.labs.map(labRow),
    labsWithheld: row.labs_withheld,
  };
}

/**
 * The days the user's data covers, null when it has no rows: from the earliest row of any table to the day
 * windows end on, the last daily row's date or, without daily rows, the latest workout or panel (the rule
 * the gates' series follow, gates-py/gates/finding_series.py rule 3).
 */
export function dataDateRange(
  data: Pick<TurnHealthData, 'daily' | 'workouts' | 'labs'>,
): { first: string; last: string } | null {
  const days = [
    ...data.daily.map((d) => d.date),
    ...data.workouts.map((w) => w.date),
    ...data.labs.map((b) => b.taken_on),
  ];
  if (days.length === 0) return null;
  const first = days.reduce((a, b) => (b < a ? b : a));
  const last = data.daily.length > 0 ? data.daily[data.daily.length - 1].date : days.reduce((a, b) => (b > a ? b : a));
  return { first, last };
}

/** How many rows of each table a turn's snapshot holds (a profile is one row or none). */
export interface TurnDataCounts {
  daily: number;
  workouts: number;
  labs: number;
  profile: boolean;
  /** No lab results because the turn left them out (`include_biomarkers: false`), whatever the user has. */
  labsWithheld: boolean;
}

/** The counts of `data`, the turn's snapshot as `readTurnHealthData` gives it. */
export const turnDataCounts = (data: TurnHealthData): TurnDataCounts => ({
  daily: data.daily.length,
  workouts: data.workouts.length,
  labs: data.labs.length,
  profile: data.profile !== null,
  labsWithheld: data.labsWithheld,
});

/**
 * The counts of the turn's snapshot if one was taken, null if no step of the turn has read the data. Never
 * takes one: a step that only asks whether there was data to compute from (synthesis, the briefing) reads
 * what the computing steps saw.
 */
export async function readTurnDataCounts(pool: Pool, turnId: string): Promise<TurnDataCounts | null> {
  const { rows } = await pool.query<{
    daily_rows: number;
    workout_rows: number;
    lab_rows: number;
    profile: boolean;
    labs_withheld: boolean;
  }>(
    `SELECT daily_rows, workout_rows, lab_rows, profile IS NOT NULL AS profile, labs_withheld
     FROM turn_data_snapshots WHERE turn_id = $1`,
    [turnId],
  );
  const row = rows[0];
  return row
    ? {
        daily: row.daily_rows,
        workouts: row.workout_rows,
        labs: row.lab_rows,
        profile: row.profile,
        labsWithheld: row.labs_withheld,
      }
    : null;
}
