/**
 * `amy data list`'s tables, and `amy data connections`'s: fixed-width columns, so that rows printed page by page line up without
 * reading everything first. Short headings keep a daily row narrow (85 columns); the help says what each
 * one is. A value not measured is `-`; a fraction shows one decimal, a lab value four significant digits
 * (--json has the exact value).
 */
import type { DailySummary, LabResult, TerraConnection, Workout } from '@amy/sdk';

export interface RowTable<T> {
  header: string;
  format(row: T): string;
}

/** Numbers are right-aligned; text (`left`) is left-aligned. */
type Column<T> = [heading: string, width: number, value: (row: T) => string, align?: 'left'];

const num = (value: number | null) =>
  value === null ? '-' : Number.isInteger(value) ? String(value) : value.toFixed(1);

function tableOf<T>(columns: Array<Column<T>>, last?: [heading: string, value: (row: T) => string]): RowTable<T> {
  const cell = (text: string, [, width, , align]: Column<T>) =>
    align === 'left' ? text.padEnd(width) : text.padStart(width);
  const line = (cells: string[]) => cells.join('  ').trimEnd();
  return {
    header: line([...columns.map((column) => cell(column[0], column)), ...(last ? [last[0]] : [])]),
    format: (row) => line([...columns.map((column) => cell(column[2](row), column)), ...(last ? [last[1](row)] : [])]),
  };
}

export const dailyTable = tableOf<DailySummary>([
  ['date', 10, (d) => d.date, 'left'],
  ['steps', 5, (d) => num(d.steps)],
  ['sleep', 5, (d) => num(d.sleep_minutes)],
  ['deep', 4, (d) => num(d.deep_sleep_minutes)],
  ['rem', 4, (d) => num(d.rem_sleep_minutes)],
  ['light', 5, (d) => num(d.light_sleep_minutes)],
  ['awake', 5, (d) => num(d.awake_minutes)],
  ['rhr', 5, (d) => num(d.resting_heart_rate)],
  ['hrv', 5, (d) => num(d.heart_rate_variability)],
  ['stress', 6, (d) => num(d.stress_management_score)],
  ['azm', 4, (d) => num(d.active_zone_minutes)],
  ['score', 5, (d) => num(d.sleep_score)],
]);

export const workoutTable = tableOf<Workout>(
  [
    ['date', 10, (w) => w.date, 'left'],
    ['type', 8, (w) => w.type, 'left'],
    ['min', 5, (w) => num(w.duration_minutes)],
    ['km', 6, (w) => num(w.distance_km)],
    ['kcal', 5, (w) => num(w.calories)],
    ['avg_hr', 6, (w) => num(w.avg_heart_rate)],
  ],
  // Last and unpadded: an external_id may be up to 255 characters (visible ASCII, the API's rule).
  ['external_id', (w) => w.external_id],
);

export const labTable = tableOf<LabResult>([
  ['date', 10, (l) => l.date, 'left'],
  ['biomarker', 17, (l) => l.biomarker, 'left'],
  // Lab values span 0.5 mg/L to 300 mg/dL: four significant digits, not one decimal.
  ['value', 7, (l) => String(Number(l.value.toPrecision(4)))],
  ['unit', 6, (l) => l.unit, 'left'],
  ['loinc', 7, (l) => l.loinc, 'left'],
]);

/** An instant to the minute, in UTC: `2026-11-20 08:00`; `-` when there is none. */
const minute = (instant: string | null) =>
  instant === null ? '-' : `${instant.slice(0, 10)} ${instant.slice(11, 16)}`;

export const connectionTable = tableOf<TerraConnection>(
  [
    ['provider', 14, (c) => c.provider, 'left'],
    // reauth_required, the longest status, is 15 characters.
    ['status', 15, (c) => c.status, 'left'],
    ['connected (UTC)', 16, (c) => minute(c.connected_at), 'left'],
    ['updated (UTC)', 16, (c) => minute(c.updated_at), 'left'],
  ],
  // Last and unpadded: Terra's id is not ours to bound.
  ['terra_user_id', (c) => c.terra_user_id],
);
