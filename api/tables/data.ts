/**
 * The health data service gives the API its view of a user's daily summaries, workouts, lab results and
 * profile (docs/api.md#health-data), and of the providers they connected through Terra. Every write passes the validator the CSV import shares
 * (platform/health-data/validate.ts) before anything is stored, so a request with one bad row changes
 * nothing; its 400 names the row and field (or the path in a FHIR bundle), never the value. Lab values are
 * converted to their biomarkers' canonical units first (platform/health-data/labs). Pages sit behind an
 * opaque cursor.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import {
  MAX_DATA_ROWS_PER_REQUEST,
  type DailyList,
  type DeleteDailyQuery,
  type DeleteLabsQuery,
  type FhirBundle,
  type LabResultList,
  type ListDailyQuery,
  type ListLabsQuery,
  type ListWorkoutsQuery,
  type Profile,
  type TerraConnectionList,
  type UpsertDailyRequest,
  type UpsertLabRowsRequest,
  type UpsertResult,
  type UpsertWorkoutsRequest,
  type WorkoutList,
} from '../../contracts/data';
import { DAILY_METRICS, parseIsoDate, type DailyRow, type WorkoutRecord } from '../../contracts/health-records';
import { deleteDailyRange, listDailyPage, upsertDailyRows } from '../../platform/health-data/daily-summaries';
import { deleteWorkout, listWorkoutsPage, upsertWorkouts } from '../../platform/health-data/workouts';
import { readHealthProfile, writeHealthProfile } from '../../platform/health-data/store';
import { listTerraConnections } from '../../platform/terra/connections';
import { deleteLabResults, listLabResultsPage, upsertLabResults } from '../../platform/health-data/lab-results';
import {
  LAB_BIOMARKER_NAMES,
  labBiomarker,
  labRowsFromFhirBundle,
  type FhirLabRefusal,
} from '../../platform/health-data/labs';
import {
  dailyRowsProblem,
  fhirLabRowsProblem,
  labRowsFromInput,
  profileProblem,
  utcToday,
  workoutRowsProblem,
  type FieldProblem,
} from '../../platform/health-data/validate';
import { ApiError, notFound } from '../errors';

const refuse = (problem: FieldProblem) =>
  new ApiError('invalid_field', `${problem.field}: ${problem.message}.`, problem.field);

const isDay = (value: string) => parseIsoDate(value) !== null;

/**
 * A page's end, opaque to clients (base64url JSON): the daily pages' last day, the workouts' day and id, the
 * lab results' day and biomarker.
 */
const dailyCursorSchema = z.tuple([z.string().refine(isDay)]);
const workoutCursorSchema = z.tuple([z.string().refine(isDay), z.string().min(1)]);
const labCursorSchema = z.tuple([z.string().refine(isDay), z.enum(LAB_BIOMARKER_NAMES)]);

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

/** How many other refused entries of a bundle the message names besides the first (the field). */
const MORE_REFUSALS_NAMED = 10;

/**
 * A bundle's refusals as one 400: the first names the field, the message lists the paths of the others
 * (the first few), so a sender can fix them in one pass. Paths and reasons only, never a value.
 */
function refuseBundle(refusals: readonly FhirLabRefusal[]): ApiError {
  const [first, ...others] = refusals;
  const field = first.path || 'body';
  const more = others.length
    ? ` ${others.length} more refused: ${others
        .slice(0, MORE_REFUSALS_NAMED)
        .map((refusal) => `${refusal.path || 'body'} (${refusal.reason})`)
        .join(', ')}${others.length > MORE_REFUSALS_NAMED ? ', …' : ''}.`
    : '';
  return new ApiError('invalid_field', `${field}: ${first.message}.${more}`, field);
}

/**
 * Upserts lab results sent as rows by biomarker and day: each value converted to its biomarker's canonical
 * unit, all of them stored or, when one is refused, none.
 */
export async function upsertLabRowsForUser(
  pool: Pool,
  userId: string,
  body: UpsertLabRowsRequest,
): Promise<UpsertResult> {
  const normalised = labRowsFromInput(body.rows, utcToday());
  if (!normalised.ok) throw refuse(normalised.problem);
  return upsertLabResults(pool, userId, normalised.rows);
}

/**
 * Upserts the Observations of a FHIR R4 bundle as lab results, with the same checks and upsert as rows:
 * all of them or, when one entry is refused, none.
 */
export async function upsertLabBundleForUser(pool: Pool, userId: string, bundle: FhirBundle): Promise<UpsertResult> {
  // Counted before the entries are read: a bundle over the cap is refused without mapping any of it.
  if (Array.isArray(bundle.entry) && bundle.entry.length > MAX_DATA_ROWS_PER_REQUEST) {
    throw new ApiError('invalid_field', `entry: must hold at most ${MAX_DATA_ROWS_PER_REQUEST} entries.`, 'entry');
  }
  const mapped = labRowsFromFhirBundle(bundle);
  if (!mapped.ok) throw refuseBundle(mapped.refusals);
  if (mapped.rows.length === 0) {
    throw new ApiError('invalid_field', `entry: must hold 1 to ${MAX_DATA_ROWS_PER_REQUEST} Observations.`, 'entry');
  }
  const problem = fhirLabRowsProblem(mapped.rows, utcToday());
  if (problem) throw refuse(problem);
  return upsertLabResults(pool, userId, mapped.rows);
}

/** One page of the user's lab results, oldest first (by day, then biomarker), each with its LOINC code. */
export async function listLabsForUser(pool: Pool, userId: string, query: ListLabsQuery): Promise<LabResultList> {
  checkRange(query);
  const position = query.cursor ? decodeCursor(labCursorSchema, query.cursor) : undefined;
  const { rows, hasMore } = await listLabResultsPage(pool, userId, {
    biomarker: query.biomarker,
    from: query.from,
    to: query.to,
    after: position ? { date: position[0], biomarker: position[1] } : undefined,
    limit: query.limit,
  });
  const last = rows[rows.length - 1];
  return {
    data: rows.map((row) => ({ ...row, loinc: labBiomarker(row.biomarker).loinc })),
    next_cursor: hasMore ? encodeCursor([last.date, last.biomarker]) : null,
    has_more: hasMore,
  };
}

export async function deleteLabsForUser(pool: Pool, userId: string, query: DeleteLabsQuery): Promise<number> {
  checkRange(query);
  return deleteLabResults(pool, userId, query);
}

/** The user's connections through Terra, as their connection events left them; only ever the user's own. */
export async function listConnectionsForUser(pool: Pool, userId: string): Promise<TerraConnectionList> {
  return { data: await listTerraConnections(pool, userId) };
}
