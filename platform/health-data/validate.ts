/**
 * The one gate every health number passes before it is stored, whether it comes through the API
 * (api/tables/data.ts) or a CSV import (./csv-import.ts): values in their accepted ranges, whole numbers
 * where the column is Int, sleep stages that fit in the night, real calendar days that are not in the
 * future, and each day (or workout) once per request. The rules are the ranges of contracts/health-records.ts;
 * a lab value's, its biomarker's accepted range in its canonical unit (contracts/lab-biomarkers.ts), after
 * conversion.
 *
 * Messages never quote a value: a caller that may show the value (the CSV import, to the file's own
 * user) adds it itself; the API names the row and field only.
 */
import {
  DAILY_METRICS,
  METRIC_SPECS,
  PROFILE_SPECS,
  SLEEP_STAGES,
  WORKOUT_SPECS,
  formatIsoDate,
  parseIsoDate,
  type DailyRow,
  type FieldSpec,
  type HealthProfileRow,
  type ProfileNumberField,
  type WorkoutNumberField,
  type WorkoutRecord,
} from '../../contracts/health-records';
import { labBiomarker, normaliseLabValue, type FhirLabRow, type LabRow, type LabUnitRefusalReason } from './labs';

/** Devices round each stage separately, so the stages may overshoot the total by a few minutes. */
export const STAGE_SUM_TOLERANCE_MINUTES = 5;

/** A problem with one field: `field` is its path in the request (`rows[3].steps`). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The last day a record may be for: today in UTC. */
export const utcToday = (now: Date = new Date()) => formatIsoDate(now);

/** Why a number is not acceptable for a field, or null when it is. */
export function numberProblem(spec: FieldSpec, value: number): string | null {
  if (!Number.isFinite(value)) return 'is not a number';
  if (spec.integer && !Number.isInteger(value)) return 'must be a whole number';
  const [min, max] = spec.accepted;
  if (value < min || value > max) return `is outside the accepted range ${min}–${max}`;
  return null;
}

/** Why a `YYYY-MM-DD` text is not an acceptable day, or null when it is. */
export function dateProblem(date: string, today: string): string | null {
  if (!parseIsoDate(date)) return 'is not a calendar date in YYYY-MM-DD form';
  if (date > today) return 'is in the future (the last day accepted is today in UTC)';
  return null;
}

/**
 * The sleep stages' sum when it is more than the night they split (beyond the rounding tolerance);
 * null when they fit, or when there is no total to compare with.
 */
export function sleepStagesOverrun(row: DailyRow): number | null {
  if (row.sleep_minutes === null) return null;
  const total = SLEEP_STAGES.reduce((sum, stage) => sum + (row[stage] ?? 0), 0);
  return total > row.sleep_minutes + STAGE_SUM_TOLERANCE_MINUTES ? total : null;
}

/**
 * Remembers where each key was first seen: the same day (or workout id) twice in one request or file
 * is refused rather than one silently overwriting the other. Returns the earlier position of a repeat.
 */
export function firstPositions<P>(): (key: string, position: P) => P | undefined {
  const first = new Map<string, P>();
  return (key, position) => {
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, position);
    return earlier;
  };
}

const at = (index: number, field: string) => `rows[${index}].${field}`;

/** The first problem among daily rows, in row order, or null when every row may be stored. */
export function dailyRowsProblem(rows: readonly DailyRow[], today: string): FieldProblem | null {
  const seen = firstPositions<number>();
  for (const [i, row] of rows.entries()) {
    const date = dateProblem(row.date, today);
    if (date) return { field: at(i, 'date'), message: date };
    for (const metric of DAILY_METRICS) {
      const value = row[metric];
      const problem = value === null ? null : numberProblem(METRIC_SPECS[metric], value);
      if (problem) return { field: at(i, metric), message: problem };
    }
    if (sleepStagesOverrun(row) !== null) {
      const message = `is less than its sleep stages add up to (${SLEEP_STAGES.join(' + ')}, with ${STAGE_SUM_TOLERANCE_MINUTES} minutes' tolerance)`;
      return { field: at(i, 'sleep_minutes'), message };
    }
    const earlier = seen(row.date, i);
    if (earlier !== undefined) return { field: at(i, 'date'), message: `repeats the date of rows[${earlier}]` };
  }
  return null;
}

/** The first problem among workouts, in row order, or null when every one may be stored. */
export function workoutRowsProblem(rows: readonly WorkoutRecord[], today: string): FieldProblem | null {
  const seen = firstPositions<number>();
  for (const [i, row] of rows.entries()) {
    const date = dateProblem(row.date, today);
    if (date) return { field: at(i, 'date'), message: date };
    for (const field of Object.keys(WORKOUT_SPECS) as WorkoutNumberField[]) {
      const value = row[field];
      const problem = value === null ? null : numberProblem(WORKOUT_SPECS[field], value);
      if (problem) return { field: at(i, field), message: problem };
    }
    const earlier = seen(row.external_id, i);
    if (earlier !== undefined) {
      return { field: at(i, 'external_id'), message: `repeats the external_id of rows[${earlier}]` };
    }
  }
  return null;
}

/** The first problem of a profile, or null; a birth year cannot be after the current year. */
export function profileProblem(profile: HealthProfileRow, today: string): FieldProblem | null {
  for (const field of Object.keys(PROFILE_SPECS) as ProfileNumberField[]) {
    const problem = numberProblem(PROFILE_SPECS[field], profile[field]);
    if (problem) return { field, message: problem };
  }
  if (profile.birth_year > Number(today.slice(0, 4))) {
    return { field: 'birth_year', message: 'is after the current year' };
  }
  return null;
}

/** A lab row as a client sends it: a biomarker's name, a value in any unit that converts, a day. */
export interface LabRowInput {
  date: string;
  biomarker: string;
  value: number;
  unit: string;
}

/** The field of a sent row that a refusal of ./labs's unit conversion is about. */
const LAB_REFUSAL_FIELD: Record<LabUnitRefusalReason, keyof LabRowInput> = {
  unknown_biomarker: 'biomarker',
  unknown_unit: 'unit',
  inconvertible_unit: 'unit',
  invalid_value: 'value',
};

/** Where a lab row's fields are in the request: `rows[3]` and `rows[3].date`, or their paths in a FHIR bundle. */
interface LabRowFields {
  row: string;
  date: string;
  value: string;
}

/**
 * What is checked of a lab row once in its canonical unit, whichever way it came: a value in its
 * biomarker's accepted range, and its biomarker and day not already in the request.
 */
function labRowChecker() {
  const seen = firstPositions<string>();
  return (row: LabRow, fields: LabRowFields): FieldProblem | null => {
    const { accepted } = labBiomarker(row.biomarker);
    const value = numberProblem({ integer: false, accepted }, row.value);
    if (value) return { field: fields.value, message: `${value} (${row.unit}, for ${row.biomarker})` };
    const earlier = seen(`${row.biomarker} ${row.date}`, fields.row);
    if (earlier !== undefined) return { field: fields.date, message: `repeats the biomarker and date of ${earlier}` };
    return null;
  };
}

/**
 * The rows in their biomarkers' canonical units, or the first problem in row order: a day that is not
 * acceptable, an unknown biomarker, a unit that is not UCUM or does not convert, a value that is not a
 * number zero or more or not in the biomarker's accepted range, the same biomarker and day twice.
 */
export function labRowsFromInput(
  rows: readonly LabRowInput[],
  today: string,
): { ok: true; rows: LabRow[] } | { ok: false; problem: FieldProblem } {
  const check = labRowChecker();
  const normalised: LabRow[] = [];
  for (const [i, row] of rows.entries()) {
    const date = dateProblem(row.date, today);
    if (date) return { ok: false, problem: { field: at(i, 'date'), message: date } };
    const value = normaliseLabValue(row);
    if (!value.ok)
      return { ok: false, problem: { field: at(i, LAB_REFUSAL_FIELD[value.reason]), message: value.message } };
    const lab = { biomarker: value.biomarker, value: value.value, unit: value.unit, date: row.date };
    const problem = check(lab, { row: `rows[${i}]`, date: at(i, 'date'), value: at(i, 'value') });
    if (problem) return { ok: false, problem };
    normalised.push(lab);
  }
  return { ok: true, rows: normalised };
}

/** The first problem among the rows a FHIR bundle mapped to (./labs), named by its path in the bundle. */
export function fhirLabRowsProblem(rows: readonly FhirLabRow[], today: string): FieldProblem | null {
  const check = labRowChecker();
  for (const row of rows) {
    const date = dateProblem(row.date, today);
    if (date) return { field: row.datePath, message: date };
    const problem = check(row, { row: row.path, date: row.datePath, value: `${row.path}.valueQuantity.value` });
    if (problem) return problem;
  }
  return null;
}
