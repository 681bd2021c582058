/**
 * The validator every health number passes before it is stored (platform/health-data/validate.ts), as the
 * API and the CSV import both use it: ranges, whole numbers, sleep stages, days, repeats, and messages that
 * never quote a value.
 */
import { DAILY_METRICS, METRIC_SPECS, type DailyRow, type WorkoutRecord } from '../../contracts/health-records';
import {
  STAGE_SUM_TOLERANCE_MINUTES,
  dailyRowsProblem,
  dateProblem,
  numberProblem,
  profileProblem,
  sleepStagesOverrun,
  utcToday,
  workoutRowsProblem,
} from '../../platform/health-data/validate';

const TODAY = '2026-11-26';
const empty = Object.fromEntries(DAILY_METRICS.map((m) => [m, null])) as Record<(typeof DAILY_METRICS)[number], null>;
const dayRow = (date: string, values: Partial<DailyRow> = {}): DailyRow => ({ ...empty, date, ...values });
const workout = (values: Partial<WorkoutRecord> = {}): WorkoutRecord => ({
  external_id: 'w-1',
  date: '2026-11-20',
  type: 'running',
  duration_minutes: 40,
  distance_km: 8,
  calories: 400,
  avg_heart_rate: 150,
  ...values,
});

describe('numberProblem', () => {
  test.each(DAILY_METRICS)('%s: both ends of its range are accepted, one step past either is not', (metric) => {
    const spec = METRIC_SPECS[metric];
    const [min, max] = spec.accepted;
    expect(numberProblem(spec, min)).toBeNull();
    expect(numberProblem(spec, max)).toBeNull();
    expect(numberProblem(spec, min - 1)).toMatch(/outside the accepted range/);
    expect(numberProblem(spec, max + 1)).toMatch(/outside the accepted range/);
    if (spec.integer) expect(numberProblem(spec, min + 0.5)).toBe('must be a whole number');
    else expect(numberProblem(spec, min + 0.5)).toBeNull();
  });

  test('a non-finite number is refused', () => {
    expect(numberProblem(METRIC_SPECS.resting_heart_rate, Number.NaN)).toBe('is not a number');
    expect(numberProblem(METRIC_SPECS.resting_heart_rate, Infinity)).toBe('is not a number');
  });
});

describe('dateProblem', () => {
  test('today (UTC) is the last day accepted', () => {
    expect(dateProblem(TODAY, TODAY)).toBeNull();
    expect(dateProblem('2026-11-27', TODAY)).toMatch(/in the future/);
  });

  test.each(['2026-02-29', '2026-13-01', '2026/01/05', '26-01-05', '2026-1-5', ''])('%j is not a day', (text) => {
    expect(dateProblem(text, TODAY)).toMatch(/not a calendar date/);
  });

  test('a leap day is a day', () => {
    expect(dateProblem('2024-02-29', TODAY)).toBeNull();
  });

  test('utcToday is the UTC calendar day', () => {
    expect(utcToday(new Date('2026-11-26T23:59:59-05:00'))).toBe('2026-11-27');
  });
});

describe('sleepStagesOverrun', () => {
  const night = { deep_sleep_minutes: 80, rem_sleep_minutes: 95, light_sleep_minutes: 210, awake_minutes: 35 };

  test('stages that fit the night, within the rounding tolerance, pass', () => {
    expect(sleepStagesOverrun(dayRow(TODAY, { sleep_minutes: 420, ...night }))).toBeNull();
    expect(
      sleepStagesOverrun(dayRow(TODAY, { sleep_minutes: 420 - STAGE_SUM_TOLERANCE_MINUTES, ...night })),
    ).toBeNull();
  });

  test('stages past the tolerance are refused, even when some are missing', () => {
    expect(sleepStagesOverrun(dayRow(TODAY, { sleep_minutes: 400, ...night }))).toBe(420);
    expect(sleepStagesOverrun(dayRow(TODAY, { sleep_minutes: 200, light_sleep_minutes: 210 }))).toBe(210);
  });

  test('without a total there is nothing to compare', () => {
    expect(sleepStagesOverrun(dayRow(TODAY, night))).toBeNull();
  });
});

describe('dailyRowsProblem', () => {
  test('good rows pass', () => {
    expect(dailyRowsProblem([dayRow('2026-11-01', { steps: 8000 }), dayRow('2026-11-02')], TODAY)).toBeNull();
  });

  test.each<[string, DailyRow[], string]>([
    ['a value out of range', [dayRow('2026-11-01'), dayRow('2026-11-02', { steps: 70_000 })], 'rows[1].steps'],
    [
      'a fraction in an Int column',
      [dayRow('2026-11-01', { active_zone_minutes: 2.5 })],
      'rows[0].active_zone_minutes',
    ],
    [
      'stages longer than the night',
      [dayRow('2026-11-01', { sleep_minutes: 60, rem_sleep_minutes: 90 })],
      'rows[0].sleep_minutes',
    ],
    ['a future day', [dayRow('2026-11-27')], 'rows[0].date'],
    ['a repeated day', [dayRow('2026-11-01'), dayRow('2026-11-02'), dayRow('2026-11-01')], 'rows[2].date'],
  ])('%s names the row and field', (_kind, rows, field) => {
    expect(dailyRowsProblem(rows, TODAY)?.field).toBe(field);
  });

  test('the message never quotes the value', () => {
    const problem = dailyRowsProblem([dayRow('2026-11-01', { resting_heart_rate: 4242 })], TODAY);
    expect(problem?.message).not.toContain('4242');
  });
});

describe('workoutRowsProblem', () => {
  test('good workouts pass; the optional numbers may be null', () => {
    const bare = workout({ external_id: 'w-2', distance_km: null, calories: null, avg_heart_rate: null });
    expect(workoutRowsProblem([workout(), bare], TODAY)).toBeNull();
  });

  test.each<[string, WorkoutRecord[], string]>([
    ['a zero duration', [workout({ duration_minutes: 0 })], 'rows[0].duration_minutes'],
    ['more than a day', [workout({ duration_minutes: 1441 })], 'rows[0].duration_minutes'],
    ['fractional calories', [workout({ calories: 10.5 })], 'rows[0].calories'],
    ['a negative distance', [workout({ distance_km: -1 })], 'rows[0].distance_km'],
    ['a heart rate out of range', [workout({ avg_heart_rate: 300 })], 'rows[0].avg_heart_rate'],
    ['a future day', [workout({ date: '2027-01-01' })], 'rows[0].date'],
    ['a repeated external_id', [workout(), workout({ date: '2026-11-21' })], 'rows[1].external_id'],
  ])('%s names the row and field', (_kind, rows, field) => {
    expect(workoutRowsProblem(rows, TODAY)?.field).toBe(field);
  });
});

describe('profileProblem', () => {
  const profile = { sex: 'female' as const, birth_year: 1990, height_cm: 170, weight_kg: 65 };

  test.each<[string, Partial<typeof profile>, string | null]>([
    ['a plausible profile', {}, null],
    ['a birth year this year', { birth_year: 2026 }, null],
    ['a birth year after this year', { birth_year: 2027 }, 'birth_year'],
    ['a fractional birth year', { birth_year: 1990.5 }, 'birth_year'],
    ['a height out of range', { height_cm: 400 }, 'height_cm'],
    ['a weight out of range', { weight_kg: 5 }, 'weight_kg'],
  ])('%s', (_kind, change, field) => {
    expect(profileProblem({ ...profile, ...change }, TODAY)?.field ?? null).toBe(field);
  });
});
