/**
 * The health data service gives the API its view of a user's daily summaries, workouts and profile
 * (docs/api.md#health-data). Every write passes the validator the CSV import shares
 * (platform/health-data/validate.ts) before anything is stored, so a request with one bad row changes
 * nothing; its 400 names the row and field, never the value. Pages sit behind an opaque cursor.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import type {
  DailyList,
  DeleteDailyQuery,
  ListDailyQuery,
  ListWorkoutsQuery,
  Profile,
  UpsertDailyRequest,
  UpsertResult,
  UpsertWorkoutsRequest,
  WorkoutList,
} from '../../contracts/data';
import { DAILY_METRICS, parseIsoDate, type DailyRow, type WorkoutRecord } from '../../platform/health-data/records';
import { deleteDailyRange, listDailyPage, upsertDailyRows } from '../../platform/health-data/daily-summaries';
import { deleteWorkout, listWorkoutsPage, upsertWorkouts } from '../../platform/health-data/workouts';
import { readHealthProfile, writeHealthProfile } from '../../platform/health-data/store';
import {
  dailyRowsProblem,
  profileProblem,
  utcToday,
  workoutRowsProblem,
  type FieldProblem,
} from '../../platform/health-data/validate';
import { ApiError, notFound } from '../errors';

const refuse = (problem: FieldProblem) =>
  new ApiError('invalid_field', `${problem.field}: ${problem.message}.`, problem.field);

const isDay = (value: string) => parseIsoDate(value) !== null;

/** A page's end, opaque to clients (base64url JSON): the daily pages' last day, the workouts' day and id. */
const dailyCursorSchema = z.tuple([z.string().refine(isDay)]);
const workoutCursorSchema = z.tuple([z.string().refine(isDay), z.string().min(1)]);

const encodeCursor = (position: string[]) => Buffer.from(JSON.stringify(position)).toString('base64url');

function decodeCursor<S extends z.ZodType>(schema: S, cursor: string): z.infer<S> {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const parsed = schema.safeParse(decoded);
  if (!parsed.success) {
    throw new ApiError('invalid_field', 'cursor: not a next_cursor this API returned.', 'cursor');
  }
  return parsed.data;
}

/** `from` after `to` can only be a mistake: refused rather than answered with nothing. */
function checkRange(range: { from?: string; to?: string }) {
  if (range.from && range.to && range.from > range.to) {
    throw new ApiError('invalid_field', 'to: must not be before from.', 'to');
  }
}

/** Upserts the days by date, all of them or, when one is refused, none. A metric left out is null. */
export async function upsertDailyForUser(pool: Pool, userId: string, body: UpsertDailyRequest): Promise<UpsertResult> {
  const rows: DailyRow[] = body.rows.map((row) => {
    const complete = { date: row.date } as DailyRow;
    for (const metric of DAILY_METRICS) complete[metric] = row[metric] ?? null;
    return complete;
  });
  const problem = dailyRowsProblem(rows, utcToday());
  if (problem) throw refuse(problem);
  return upsertDailyRows(pool, userId, rows);
}

/** One page of the user's days, oldest first. */
export async function listDailyForUser(pool: Pool, userId: string, query: ListDailyQuery): Promise<DailyList> {
  checkRange(query);
  const after = query.cursor ? decodeCursor(dailyCursorSchema, query.cursor)[0] : undefined;
  const { rows, hasMore } = await listDailyPage(pool, userId, {
    from: query.from,
    to: query.to,
    after,
    limit: query.limit,
  });
  const last = rows[rows.length - 1];
  return { data: rows, next_cursor: hasMore ? encodeCursor([last.date]) : null, has_more: hasMore };
}

export async function deleteDailyForUser(pool: Pool, userId: string, query: DeleteDailyQuery): Promise<number> {
  checkRange(query);
  return deleteDailyRange(pool, userId, query);
}

/** Upserts the workouts by external_id, all of them or, when one is refused, none. */
export async function upsertWorkoutsForUser(
  pool: Pool,
  userId: string,
  body: UpsertWorkoutsRequest,
): Promise<UpsertResult> {
  const rows: WorkoutRecord[] = body.rows.map((row) => ({
    external_id: row.external_id,
    date: row.date,
    type: row.type,
    duration_minutes: row.duration_minutes,
    distance_km: row.distance_km ?? null,
    calories: row.calories ?? null,
    avg_heart_rate: row.avg_heart_rate ?? null,
  }));
  const problem = workoutRowsProblem(rows, utcToday());
  if (problem) throw refuse(problem);
  return upsertWorkouts(pool, userId, rows);
}

/** One page of the user's workouts, oldest first (by day, then external id). */
export async function listWorkoutsForUser(pool: Pool, userId: string, query: ListWorkoutsQuery): Promise<WorkoutList> {
  checkRange(query);
  const position = query.cursor ? decodeCursor(workoutCursorSchema, query.cursor) : undefined;
  const { rows, hasMore } = await listWorkoutsPage(pool, userId, {
    type: query.type,
    from: query.from,
    to: query.to,
    after: position ? { date: position[0], externalId: position[1] } : undefined,
    limit: query.limit,
  });
  const last = rows[rows.length - 1];
  return { data: rows, next_cursor: hasMore ? encodeCursor([last.date, last.external_id]) : null, has_more: hasMore };
}

/** Another user's workout is indistinguishable from a missing one (404). */
export async function deleteWorkoutForUserOrThrow(pool: Pool, userId: string, externalId: string): Promise<void> {
  if (!(await deleteWorkout(pool, userId, externalId))) throw notFound('Workout');
}

export async function readProfileForUserOrThrow(pool: Pool, userId: string): Promise<Profile> {
  const profile = await readHealthProfile(pool, userId);
  if (!profile) throw notFound('Health profile');
  return profile;
}

export async function writeProfileForUser(pool: Pool, userId: string, profile: Profile): Promise<Profile> {
  const problem = profileProblem(profile, utcToday());
  if (problem) throw refuse(problem);
  await writeHealthProfile(pool, userId, profile);
  return profile;
}
