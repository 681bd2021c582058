/**
 * A user's health data as the pipeline reads it and clients send it. Field names are the snake_case column
 * names the synthetic data, the statistical gates and the CSV import use; platform/health-data/store.ts reads
 * and writes them as the tables' rows. Dates are `YYYY-MM-DD` strings (calendar days, no time zone). A
 * contract: the API's schemas (./data.ts) and the CLI state the accepted ranges from these tables, so they
 * sit here, below the platform code that stores and validates the rows.
 */

export const DAILY_METRICS = [
  'steps',
  'sleep_minutes',
  'deep_sleep_minutes',
  'rem_sleep_minutes',
  'light_sleep_minutes',
  'awake_minutes',
  'resting_heart_rate',
  'heart_rate_variability',
  'stress_management_score',
  'active_zone_minutes',
  'sleep_score',
] as const;
export type DailyMetric = (typeof DAILY_METRICS)[number];

/** The columns of a daily-summary CSV, in the order an export writes them. */
export const DAILY_SUMMARY_COLUMNS = ['date', ...DAILY_METRICS] as const;

export type DailyRow = { date: string } & Record<DailyMetric, number | null>;

/** Minutes of sleep split into stages; deep + rem + light + awake make up `sleep_minutes`. */
export const SLEEP_STAGES = [
  'deep_sleep_minutes',
  'rem_sleep_minutes',
  'light_sleep_minutes',
  'awake_minutes',
] as const satisfies readonly DailyMetric[];

/**
 * What a value of a numeric field must be to be stored (platform/health-data/validate.ts): a whole number
 * where the column is Int, and within the accepted range. The ranges are wider than the generator's
 * typical values: real devices report quiet days and short nights the generator never makes.
 */
export interface FieldSpec {
  integer: boolean;
  accepted: readonly [number, number];
}

interface MetricSpec extends FieldSpec {
  /** What the generator produces for a typical adult. */
  typical: readonly [number, number];
  /** The unit a value of this metric is in, for the Fact Sheet. */
  unit: string;
}

export const METRIC_SPECS: Record<DailyMetric, MetricSpec> = {
  steps: { unit: 'steps', integer: true, typical: [1_000, 25_000], accepted: [0, 60_000] },
  sleep_minutes: { unit: 'min', integer: true, typical: [240, 600], accepted: [0, 960] },
  deep_sleep_minutes: { unit: 'min', integer: true, typical: [15, 180], accepted: [0, 960] },
  rem_sleep_minutes: { unit: 'min', integer: true, typical: [20, 200], accepted: [0, 960] },
  light_sleep_minutes: { unit: 'min', integer: true, typical: [60, 560], accepted: [0, 960] },
  awake_minutes: { unit: 'min', integer: true, typical: [5, 120], accepted: [0, 960] },
  resting_heart_rate: { unit: 'bpm', integer: false, typical: [45, 90], accepted: [30, 120] },
  heart_rate_variability: { unit: 'ms', integer: false, typical: [15, 120], accepted: [5, 250] },
  stress_management_score: { unit: 'points', integer: false, typical: [1, 100], accepted: [0, 100] },
  active_zone_minutes: { unit: 'min', integer: true, typical: [0, 180], accepted: [0, 600] },
  sleep_score: { unit: 'points', integer: false, typical: [40, 100], accepted: [0, 100] },
};

export const WORKOUT_TYPES = ['running', 'cycling', 'strength', 'yoga', 'walking', 'swimming', 'HIIT'] as const;
export type WorkoutType = (typeof WORKOUT_TYPES)[number];

/** A workout's numbers as a client sends them: a day's session of up to 24 hours. */
export const WORKOUT_SPECS = {
  duration_minutes: { integer: true, accepted: [1, 1_440] },
  distance_km: { integer: false, accepted: [0, 1_000] },
  calories: { integer: true, accepted: [0, 20_000] },
  avg_heart_rate: { integer: false, accepted: [25, 250] },
} as const satisfies Record<string, FieldSpec>;
export type WorkoutNumberField = keyof typeof WORKOUT_SPECS;

/** A profile's numbers; the birth year's upper bound is the current year (checked against today). */
export const PROFILE_SPECS = {
  birth_year: { integer: true, accepted: [1900, 9999] },
  height_cm: { integer: false, accepted: [50, 272] },
  weight_kg: { integer: false, accepted: [20, 400] },
} as const satisfies Record<string, FieldSpec>;
export type ProfileNumberField = keyof typeof PROFILE_SPECS;

export const SEXES = ['female', 'male'] as const;

export interface WorkoutRow {
  date: string;
  type: WorkoutType;
  duration_minutes: number;
  /** Absent where a reader does not select it (the generator makes none for yoga or strength). */
  distance_km?: number | null;
  calories: number | null;
  avg_heart_rate: number | null;
}

/** A workout as a client sends and reads it: under its own id (unique per user), with its distance. */
export interface WorkoutRecord extends WorkoutRow {
  external_id: string;
  distance_km: number | null;
}

export interface BiomarkerRow {
  taken_on: string;
  name: string;
  value: number;
  unit: string;
}

export interface HealthProfileRow {
  sex: (typeof SEXES)[number];
  birth_year: number;
  height_cm: number;
  weight_kg: number;
}

export interface HealthData {
  profile: HealthProfileRow;
  daily: DailyRow[];
  workouts: WorkoutRow[];
  biomarkers: BiomarkerRow[];
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` of a real calendar day (rejects 2024-02-30), as a UTC midnight Date; null otherwise. */
export function parseIsoDate(text: string): Date | null {
  const match = ISO_DATE.exec(text);
  if (!match) return null;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date : null;
}

export const formatIsoDate = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The unit of a column the analysis sees: a daily metric's own unit, shared by its trailing 30-day
 * mean and SD; null for ratios and indices (`hrv_rhr_ratio`, `cardio_fitness_index`, `_cv_30d`).
 */
export function columnUnit(column: string): string | null {
  const base = column.replace(/_(mean|sd)_30d$/, '');
  return (DAILY_METRICS as readonly string[]).includes(base) ? METRIC_SPECS[base as DailyMetric].unit : null;
}
