/**
 * Terra's events to Amy's rows (platform/terra/mapping, docs/terra-mapping.md), from Terra's own published
 * examples (test/fixtures/terra) and copies of them changed in the test: each documented rule, the combining
 * of providers, and that what is left out is named by path, never by value.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  PROVIDER_PRIORITY,
  TerraMappingError,
  chooseWorkouts,
  combineDay,
  compareProviders,
  mapLabReport,
  mapTerraDataEvent,
  type DayContribution,
  type LabRowInput,
  type MappedTerraData,
  type ProfileContribution,
  type SkippedField,
  type WorkoutContribution,
} from '../../platform/terra/mapping';
import { terraExternalId } from '../../platform/terra/mapping/workouts';
import { DAILY_METRICS, type DailyRow } from '../../contracts/health-records';
import {
  STAGE_SUM_TOLERANCE_MINUTES,
  dailyRowsProblem,
  labRowsFromInput,
  sleepStagesOverrun,
  workoutRowsProblem,
} from '../../platform/health-data/validate';
import { terraExample } from '../support/terra-fixtures';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests change Terra's JSON freely
type Json = any;

const example = (name: Parameters<typeof terraExample>[0]): Json => terraExample(name);

/** A copy of the example's event with its one record changed by `change`, sent by `provider`. */
function event(
  name: 'daily' | 'sleep' | 'body' | 'activity',
  change: (record: Json) => void = () => {},
  provider?: string,
) {
  const body = example(name);
  change(body.data[0]);
  if (provider) body.user.provider = provider;
  return body;
}

const row = (values: Partial<Record<(typeof DAILY_METRICS)[number], number>>): DailyRow => ({
  date: '2026-07-01',
  ...(Object.fromEntries(DAILY_METRICS.map((m) => [m, values[m] ?? null])) as Record<
    (typeof DAILY_METRICS)[number],
    null
  >),
});

/** No reason and no path carries a number of the event other than an index. */
function expectNoValues(mapped: { skipped: SkippedField[] }, values: number[]) {
  for (const { path, reason } of mapped.skipped) {
    for (const value of values) {
      expect(reason).not.toContain(String(value));
      expect(path.replace(/\[\d+\]/g, '')).not.toContain(String(value));
    }
  }
}

describe('the fixtures', () => {
  test('are every example the README lists, parsed afresh each time', () => {
    const dir = path.resolve(__dirname, '..', 'fixtures', 'terra');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    expect(files).toHaveLength(15);
    for (const file of files) expect(readme).toContain(`\`${file}\``);
    const a = example('daily');
    a.data[0].distance_data.steps = 1;
    expect(example('daily').data[0].distance_data.steps).toBe(11894);
  });
});

describe('daily', () => {
  test("the published example: steps, its day from start_time's date part", () => {
    const expected: MappedTerraData = {
      days: [{ kind: 'daily', provider: 'GARMIN', key: '2026-07-01', date: '2026-07-01', values: { steps: 11894 } }],
      workouts: [],
      profile: [],
      skipped: [],
    };
    expect(mapTerraDataEvent(example('daily'))).toEqual(expected);
  });

  test('resting HR, HRV from RMSSD (never SDNN), active zone minutes from moderate + vigorous', () => {
    const mapped = mapTerraDataEvent(
      event('daily', (r) => {
        r.heart_rate_data = { summary: { resting_hr_bpm: 54.5, avg_hrv_rmssd: 41.2, avg_hrv_sdnn: 63 } };
        r.active_durations_data = { moderate_intensity_seconds: 1210, vigorous_intensity_seconds: 600 };
        r.stress_data = { avg_stress_level: 40 };
      }),
    );
    expect(mapped.days[0].values).toEqual({
      steps: 11894,
      resting_heart_rate: 54.5,
      heart_rate_variability: 41.2,
      active_zone_minutes: 30, // 1810 s = 30.17 min
    });
  });

  test('active zone minutes from one intensity alone; none when neither is present; no HRV from SDNN alone', () => {
    const one = mapTerraDataEvent(
      event('daily', (r) => (r.active_durations_data = { vigorous_intensity_seconds: 930 })),
    );
    expect(one.days[0].values.active_zone_minutes).toBe(16);
    const none = mapTerraDataEvent(event('daily', (r) => (r.heart_rate_data = { summary: { avg_hrv_sdnn: 63 } })));
    expect(none.days[0].values).toEqual({ steps: 11894 });
  });

  test('the day is the date part of start_time as sent, not moved to UTC', () => {
    const mapped = mapTerraDataEvent(
      event('daily', (r) => {
        r.metadata.start_time = '2026-03-01T00:00:00-08:00';
        r.metadata.end_time = '2026-03-02T00:00:00-08:00';
      }),
    );
    expect(mapped.days[0]).toMatchObject({ date: '2026-03-01', key: '2026-03-01' });
    const east = mapTerraDataEvent(event('daily', (r) => (r.metadata.start_time = '2026-03-01T00:00:00+13:00')));
    expect(east.days[0].date).toBe('2026-03-01');
  });

  test('a value out of range, of another type or null: the first two skipped by path, null simply absent', () => {
    const body = example('daily');
    body.data.push(structuredClone(body.data[0]), structuredClone(body.data[0]));
    body.data[1].metadata.start_time = '2026-07-02T00:00:00.000000+01:00';
    body.data[1].distance_data.steps = 75_000;
    body.data[1].heart_rate_data = { summary: { resting_hr_bpm: '52' } };
    body.data[2].metadata.start_time = '2026-07-03T00:00:00.000000+01:00';
    body.data[2].distance_data.steps = null;
    const mapped = mapTerraDataEvent(body);
    expect(mapped.days.map((d) => d.values)).toEqual([{ steps: 11894 }, {}, {}]);
    expect(mapped.skipped).toEqual([
      { path: 'data[1].distance_data.steps', reason: 'steps is outside the accepted range 0–60000' },
      { path: 'data[1].heart_rate_data.summary.resting_hr_bpm', reason: 'is not a number' },
    ]);
    expectNoValues(mapped, [75_000, 52]);
  });

  test('a record without a usable day is left out; a day repeated in one event keeps the first', () => {
    const body = example('daily');
    body.data.push({ ...structuredClone(body.data[0]), distance_data: { steps: 5 } });
    body.data.push({ metadata: { start_time: 'yesterday' } }, 'not a record');
    const mapped = mapTerraDataEvent(body);
    expect(mapped.days.map((d) => d.values.steps)).toEqual([11894]);
    expect(mapped.skipped.map((s) => s.path)).toEqual(['data[1]', 'data[2].metadata.start_time', 'data[3]']);
  });
});

describe('sleep', () => {
  test('the published example: the night counts for the morning it ends, awake time within the night', () => {
    const mapped = mapTerraDataEvent(example('sleep'));
    expect(mapped.skipped).toEqual([]);
    expect(mapped.days).toEqual([
      {
        kind: 'sleep',
        provider: 'GARMIN',
        // No summary_id in the example: the session is told by its start_time.
        key: '2026-06-30T23:12:00.000000+01:00',
        date: '2026-07-01',
        nap: false,
        // 25200 s asleep + 1500 s awake; deep 5400 s, REM 5100 s, awake 1500 s.
        values: { sleep_minutes: 445, deep_sleep_minutes: 90, rem_sleep_minutes: 85, awake_minutes: 25 },
      },
    ]);
  });

  test('light sleep, the sleep score (0-100 only), the summary_id as key, a nap flagged', () => {
    const mapped = mapTerraDataEvent(
      event('sleep', (r) => {
        r.metadata.summary_id = 'sleep-1';
        r.metadata.is_nap = true;
        r.sleep_durations_data.asleep.duration_light_sleep_state_seconds = 14700;
        r.scores = { sleep: 82 };
      }),
    );
    expect(mapped.days[0]).toMatchObject({ key: 'sleep-1', nap: true });
    expect(mapped.days[0].values).toMatchObject({ light_sleep_minutes: 245, sleep_score: 82 });
    const wild = mapTerraDataEvent(event('sleep', (r) => (r.scores = { sleep: 180 })));
    expect(wild.days[0].values.sleep_score).toBeUndefined();
    expect(wild.skipped).toEqual([
      { path: 'data[0].scores.sleep', reason: 'sleep_score is outside the accepted range 0–100' },
    ]);
  });

  test('a session ending after midnight counts for the wake day, as sent (not in UTC)', () => {
    const mapped = mapTerraDataEvent(
      event('sleep', (r) => {
        r.metadata.start_time = '2026-03-01T22:30:00-08:00';
        r.metadata.end_time = '2026-03-02T06:45:00-08:00'; // 14:45 UTC, same day; but 23:30 local would be next day UTC
      }),
    );
    expect(mapped.days[0].date).toBe('2026-03-02');
    const late = mapTerraDataEvent(event('sleep', (r) => (r.metadata.end_time = '2026-03-02T23:30:00-08:00')));
    expect(late.days[0].date).toBe('2026-03-02');
  });

  test('stages rounded up past the rounded total still pass sleepStagesOverrun (its tolerance)', () => {
    // Each stage is x:30 (rounds up), the total rounds down: the stages add up to 2 minutes more than the night.
    const mapped = mapTerraDataEvent(
      event('sleep', (r) => {
        r.sleep_durations_data = {
          asleep: {
            duration_asleep_state_seconds: 3 * 5430 + 0,
            duration_deep_sleep_state_seconds: 5430,
            duration_REM_sleep_state_seconds: 5430,
            duration_light_sleep_state_seconds: 5430,
          },
          awake: { duration_awake_state_seconds: 90 },
        };
      }),
    );
    const values = mapped.days[0].values;
    // 16380 s = 273 min exactly; stages 90.5 → 91 each, awake 1.5 → 2.
    expect(values).toEqual({
      sleep_minutes: 273,
      deep_sleep_minutes: 91,
      rem_sleep_minutes: 91,
      light_sleep_minutes: 91,
      awake_minutes: 2,
    });
    const stages = 91 * 3 + 2;
    expect(stages).toBeGreaterThan(values.sleep_minutes!);
    expect(stages - values.sleep_minutes!).toBeLessThanOrEqual(STAGE_SUM_TOLERANCE_MINUTES);
    expect(sleepStagesOverrun(row(values))).toBeNull();
    expect(dailyRowsProblem([row(values)], '2026-07-01')).toBeNull();
  });

  test('stages a provider reports beyond the night are left out, the night kept', () => {
    const mapped = mapTerraDataEvent(
      event('sleep', (r) => (r.sleep_durations_data.asleep.duration_light_sleep_state_seconds = 20000)),
    );
    expect(mapped.days[0].values).toEqual({ sleep_minutes: 445 });
    expect(mapped.skipped).toEqual([
      { path: 'data[0].sleep_durations_data', reason: 'the sleep stages add up to more than the night' },
    ]);
  });
});

describe('body', () => {
  test('the published example: weight to the profile, resting HR to the day; body fat and BMI not mapped', () => {
    const mapped = mapTerraDataEvent(example('body'));
    expect(mapped).toEqual({
      days: [
        { kind: 'body', provider: 'GARMIN', key: '2026-07-01', date: '2026-07-01', values: { resting_heart_rate: 52 } },
      ],
      workouts: [],
      profile: [{ provider: 'GARMIN', measuredAt: '2026-07-01T06:55:02.000Z', weight_kg: 72.4 }],
      skipped: [],
    });
  });

  test('height too; a measurement out of range skipped by path; blood pressure and glucose not listed', () => {
    const mapped = mapTerraDataEvent(
      event('body', (r) => {
        r.measurements_data.measurements.push(
          { measurement_time: '2026-07-01T08:00:00+01:00', height_cm: 178.5 },
          { measurement_time: '2026-07-01T09:00:00+01:00', weight_kg: 7240 },
          { height_cm: 179 },
        );
        r.blood_pressure_data = { blood_pressure_samples: [{ systolic_bp: 121, diastolic_bp: 79 }] };
        r.glucose_data = { blood_glucose_samples: [{ blood_glucose_mg_per_dL: 94 }] };
      }),
    );
    const profile: ProfileContribution[] = [
      { provider: 'GARMIN', measuredAt: '2026-07-01T06:55:02.000Z', weight_kg: 72.4 },
      { provider: 'GARMIN', measuredAt: '2026-07-01T07:00:00.000Z', height_cm: 178.5 },
      // No measurement_time: the day's start stands in.
      { provider: 'GARMIN', measuredAt: '2026-06-30T23:00:00.000Z', height_cm: 179 },
    ];
    expect(mapped.profile).toEqual(profile);
    expect(mapped.skipped).toEqual([
      {
        path: 'data[0].measurements_data.measurements[2].weight_kg',
        reason: 'weight_kg is outside the accepted range 20–400',
      },
    ]);
  });
});

describe('activity', () => {
  test('the published example: a run, its numbers converted and rounded, passing workoutRowsProblem', () => {
    const mapped = mapTerraDataEvent(example('activity'));
    expect(mapped.skipped).toEqual([]);
    expect(mapped.workouts).toEqual([
      {
        provider: 'GARMIN',
        key: '123e4567-e89b-12d3-a456-426614174000',
        date: '2026-07-01',
        startedAt: '2026-07-01T06:04:11.000Z',
        endedAt: '2026-07-01T06:52:48.000Z',
        workout: {
          external_id: 'terra:GARMIN:123e4567-e89b-12d3-a456-426614174000',
          date: '2026-07-01',
          type: 'running',
          duration_minutes: 49, // 48 min 37 s
          distance_km: 8.2504,
          calories: 513, // 512.5
          avg_heart_rate: 148.2,
        },
      },
    ]);
    expect(workoutRowsProblem([mapped.workouts[0].workout], '2026-07-01')).toBeNull();
  });

  test.each([
    [58, 'running'],
    [149, 'running'],
    [17, 'cycling'],
    [15, 'cycling'],
    [80, 'strength'],
    [97, 'strength'],
    [100, 'yoga'],
    [35, 'walking'],
    [84, 'swimming'],
    [114, 'HIIT'],
    [22, 'HIIT'],
  ])('Terra activity type %i is %s', (terraType, type) => {
    const mapped = mapTerraDataEvent(event('activity', (r) => (r.metadata.type = terraType)));
    expect(mapped.workouts[0].workout.type).toBe(type);
  });

  test('a type with no workout type in Amy (tennis, "Other", none) is left out with why', () => {
    for (const terraType of [87, 108, 'Running', undefined]) {
      const mapped = mapTerraDataEvent(event('activity', (r) => (r.metadata.type = terraType)));
      expect(mapped.workouts).toEqual([]);
      expect(mapped.skipped).toEqual([
        { path: 'data[0].metadata.type', reason: 'activity type has no workout type in Amy' },
      ]);
    }
  });

  test('the day is the date part of start_time as sent; a short session is a minute; optional numbers absent', () => {
    const mapped = mapTerraDataEvent(
      event('activity', (r) => {
        r.metadata.start_time = '2026-03-01T23:50:00-08:00';
        r.metadata.end_time = '2026-03-01T23:50:20-08:00';
        delete r.distance_data;
        r.calories_data = null;
        r.heart_rate_data = { summary: { avg_hr_bpm: null } };
      }),
    );
    expect(mapped.workouts[0]).toMatchObject({ date: '2026-03-01', startedAt: '2026-03-02T07:50:00.000Z' });
    expect(mapped.workouts[0].workout).toMatchObject({
      duration_minutes: 1,
      distance_km: null,
      calories: null,
      avg_heart_rate: null,
    });
  });

  test('an optional number out of range is left out alone; a session workoutRowsProblem refuses is left out whole', () => {
    const hr = mapTerraDataEvent(event('activity', (r) => (r.heart_rate_data.summary.avg_hr_bpm = 400)));
    expect(hr.workouts[0].workout.avg_heart_rate).toBeNull();
    expect(hr.skipped).toEqual([
      {
        path: 'data[0].heart_rate_data.summary.avg_hr_bpm',
        reason: 'avg_heart_rate is outside the accepted range 25–250',
      },
    ]);
    const long = mapTerraDataEvent(
      event('activity', (r) => (r.metadata.end_time = '2026-07-03T07:52:48.000000+01:00')),
    );
    expect(long.workouts).toEqual([]);
    expect(long.skipped).toEqual([
      {
        path: 'data[0].metadata.end_time',
        reason: 'duration_minutes is outside the accepted range 1–1440, so the workout is left out',
      },
    ]);
    expectNoValues(long, [2928]);
  });

  test('external ids are visible ASCII of at most 255 characters, and distinct ids stay distinct', () => {
    const id = terraExternalId('GARMIN', 'run 1/é');
    expect(id).toBe('terra:GARMIN:run%201/%C3%A9');
    const long = terraExternalId('GARMIN', 'x'.repeat(300));
    const other = terraExternalId('GARMIN', `${'x'.repeat(299)}y`);
    for (const value of [id, long, other]) expect(value).toMatch(/^[\x21-\x7E]{1,255}$/);
    expect(long).not.toBe(other);
    expect(terraExternalId('A', '%20')).not.toBe(terraExternalId('A', ' '));
  });
});

describe('the envelope', () => {
  test.each([
    ['not an object', () => 'daily'],
    ['an unknown type', () => ({ ...example('daily'), type: 'nutrition' })],
    ['no data array', () => ({ ...example('daily'), data: {} })],
    ['no provider', () => ({ ...example('daily'), user: { user_id: 'u' } })],
    ['an auth event', () => example('auth_success')],
    ['a lab report', () => example('lab_report_completed')],
  ])('%s is a TerraMappingError', (_, body) => {
    expect(() => mapTerraDataEvent(body())).toThrow(TerraMappingError);
  });
});

describe('provider priority', () => {
  test('the documented order, case-insensitive; unknown providers after, alphabetically', () => {
    expect(PROVIDER_PRIORITY.slice(0, 3)).toEqual(['OURA', 'WHOOP', 'GARMIN']);
    const sorted = ['apple', 'ZEPP', 'GARMIN', 'oura', 'BIOSTRAP', 'Google'].sort(compareProviders);
    expect(sorted).toEqual(['oura', 'GARMIN', 'apple', 'Google', 'BIOSTRAP', 'ZEPP']);
    expect(compareProviders('garmin', 'GARMIN')).toBe(0);
  });
});

const day = (
  provider: string,
  kind: DayContribution['kind'],
  values: DayContribution['values'],
  more: Partial<DayContribution> = {},
): DayContribution => ({
  kind,
  provider,
  key: kind === 'sleep' ? `${provider}-${Math.random()}` : '2026-07-01',
  date: '2026-07-01',
  values,
  ...(kind === 'sleep' ? { nap: false } : {}),
  ...more,
});

describe('combineDay', () => {
  test('two providers the same day: per metric the higher priority one that has it, from the mapped fixtures', () => {
    const garmin = mapTerraDataEvent(
      event('daily', (r) => (r.heart_rate_data = { summary: { resting_hr_bpm: 55, avg_hrv_rmssd: 38 } })),
    ).days;
    const oura = mapTerraDataEvent(
      event(
        'daily',
        (r) => {
          r.distance_data = null;
          r.heart_rate_data = { summary: { resting_hr_bpm: 51 } };
        },
        'OURA',
      ),
    ).days;
    expect(combineDay([...garmin, ...oura])).toEqual({
      steps: 11894, // only Garmin has steps
      resting_heart_rate: 51, // Oura first
      heart_rate_variability: 38,
    });
  });

  test('a watch and a phone: steps are never summed or averaged, the watch counts', () => {
    const watch = mapTerraDataEvent(example('daily')).days;
    const phone = mapTerraDataEvent(event('daily', (r) => (r.distance_data.steps = 9000), 'APPLE')).days;
    expect(combineDay([...phone, ...watch])).toEqual({ steps: 11894 });
    expect(combineDay([...watch, ...phone])).toEqual({ steps: 11894 });
  });

  test("a night split in two is that provider's sum; a nap never counts", () => {
    const first = mapTerraDataEvent(
      event('sleep', (r) => {
        r.metadata.summary_id = 'a';
        r.metadata.start_time = '2026-06-30T23:00:00+01:00';
        r.metadata.end_time = '2026-07-01T03:00:00+01:00';
        r.sleep_durations_data = {
          asleep: { duration_asleep_state_seconds: 13800, duration_deep_sleep_state_seconds: 3600 },
          awake: { duration_awake_state_seconds: 600 },
        };
        r.scores = { sleep: 70 };
      }),
    ).days;
    const second = mapTerraDataEvent(
      event('sleep', (r) => {
        r.metadata.summary_id = 'b';
        r.metadata.start_time = '2026-07-01T03:30:00+01:00';
        r.metadata.end_time = '2026-07-01T07:00:00+01:00';
        r.sleep_durations_data = {
          asleep: { duration_asleep_state_seconds: 12000, duration_deep_sleep_state_seconds: 1800 },
          awake: { duration_awake_state_seconds: 600 },
        };
        r.scores = { sleep: 80 };
      }),
    ).days;
    const nap = mapTerraDataEvent(
      event('sleep', (r) => {
        r.metadata.summary_id = 'nap';
        r.metadata.is_nap = true;
        r.metadata.start_time = '2026-07-01T14:00:00+01:00';
        r.metadata.end_time = '2026-07-01T14:40:00+01:00';
        r.sleep_durations_data = { asleep: { duration_asleep_state_seconds: 2400 } };
        r.scores = { sleep: 99 };
      }),
    ).days;
    expect(nap[0].nap).toBe(true);
    expect(combineDay([...first, ...second, ...nap])).toEqual({
      sleep_minutes: 240 + 210,
      deep_sleep_minutes: 60 + 30,
      awake_minutes: 10 + 10,
      sleep_score: 70, // the longer session's score, never a sum
    });
    expect(combineDay(nap)).toEqual({});
  });

  test("the night comes whole from one provider: the stages always split that provider's total", () => {
    const oura = day('OURA', 'sleep', { sleep_minutes: 420 });
    const garmin = day('GARMIN', 'sleep', { sleep_minutes: 380, deep_sleep_minutes: 200, light_sleep_minutes: 200 });
    const combined = combineDay([garmin, oura]);
    expect(combined).toEqual({ sleep_minutes: 420 });
    expect(dailyRowsProblem([row(combined)], '2026-07-01')).toBeNull();
  });

  test('a sleep score comes from the first provider that has one; a re-delivered contribution is counted once', () => {
    const oura = day('OURA', 'sleep', { sleep_minutes: 420 }, { key: 'o1' });
    const garmin = day('GARMIN', 'sleep', { sleep_minutes: 400, sleep_score: 77 }, { key: 'g1' });
    expect(combineDay([oura, garmin, { ...garmin }])).toEqual({ sleep_minutes: 420, sleep_score: 77 });
  });

  test("a provider's daily summary wins over its body record; contributions of two days are refused", () => {
    const daily = day('GARMIN', 'daily', { resting_heart_rate: 55 });
    const body = day('GARMIN', 'body', { resting_heart_rate: 53 });
    expect(combineDay([body, daily])).toEqual({ resting_heart_rate: 55 });
    expect(() => combineDay([daily, { ...body, date: '2026-07-02', key: '2026-07-02' }])).toThrow();
    expect(combineDay([])).toEqual({});
  });
});

const workout = (provider: string, key: string, startedAt: string, endedAt: string): WorkoutContribution => ({
  provider,
  key,
  date: startedAt.slice(0, 10),
  startedAt,
  endedAt,
  workout: {
    external_id: `terra:${provider}:${key}`,
    date: startedAt.slice(0, 10),
    type: 'running',
    duration_minutes: 30,
    distance_km: null,
    calories: null,
    avg_heart_rate: null,
  },
});

describe('chooseWorkouts', () => {
  test("the same run from a watch and a phone: the watch's is kept", () => {
    const garmin = mapTerraDataEvent(example('activity')).workouts;
    const apple = mapTerraDataEvent(
      event(
        'activity',
        (r) => {
          r.metadata.summary_id = 'apple-run';
          r.metadata.start_time = '2026-07-01T07:10:00+01:00';
        },
        'APPLE',
      ),
    ).workouts;
    expect(chooseWorkouts([...apple, ...garmin])).toEqual(garmin);
  });

  test('an overlap of exactly half the shorter session or less keeps both', () => {
    const a = workout('GARMIN', 'a', '2026-07-01T07:00:00.000Z', '2026-07-01T08:00:00.000Z');
    const half = workout('APPLE', 'b', '2026-07-01T07:45:00.000Z', '2026-07-01T08:15:00.000Z'); // 15 of 30 min
    const more = workout('APPLE', 'c', '2026-07-01T07:44:00.000Z', '2026-07-01T08:14:00.000Z'); // 16 of 30 min
    expect(chooseWorkouts([a, half])).toEqual([a, half]);
    expect(chooseWorkouts([more, a])).toEqual([a]);
  });

  test("one provider's overlapping sessions are all kept", () => {
    const a = workout('GARMIN', 'a', '2026-07-01T07:00:00.000Z', '2026-07-01T08:00:00.000Z');
    const b = workout('garmin', 'b', '2026-07-01T07:10:00.000Z', '2026-07-01T07:50:00.000Z');
    expect(chooseWorkouts([a, b])).toEqual([a, b]);
  });
});

describe('lab reports', () => {
  test('the published example (hemoglobin, LOINC 718-7) is not one of our biomarkers: skipped with why', () => {
    expect(mapLabReport(example('lab_report_completed'))).toEqual({
      rows: [],
      skipped: [
        {
          path: 'data.results[0].biomarker.loinc_code',
          reason: 'the LOINC code is not one of the biomarkers Amy stores',
        },
      ],
    });
  });

  /** The example's result with a real biomarker of ours: LDL cholesterol by calculation, in mmol/L. */
  function ldlReport(change: (result: Json, data: Json) => void = () => {}) {
    const body = example('lab_report_completed');
    const result = body.data.results[0];
    result.source = { name: 'LDL Cholesterol', value: '3.1', units: 'mmol/L', collection_date: '2026-06-29' };
    result.biomarker = { key: 'ldl_cholesterol', display_name: 'LDL Cholesterol', loinc_code: '13457-7' };
    result.measurement = { type: 'numeric', numeric: 3.1, units: 'mmol/L', ucum_code: 'mmol/L' };
    change(result, body.data);
    return body;
  }

  test('matched by LOINC, in input form; labRowsFromInput converts the unit', () => {
    const mapped = mapLabReport(ldlReport());
    const rows: LabRowInput[] = [{ date: '2026-06-29', biomarker: 'ldl_cholesterol', value: 3.1, unit: 'mmol/L' }];
    expect(mapped).toEqual({
      rows,
      skipped: [],
    });
    const stored = labRowsFromInput(mapped.rows, '2026-07-01');
    expect(stored).toEqual({
      ok: true,
      rows: [{ date: '2026-06-29', biomarker: 'ldl_cholesterol', value: expect.closeTo(119.9, 1), unit: 'mg/dL' }],
    });
  });

  test('an alias LOINC code, the units when there is no UCUM code, the report date when there is no collection date', () => {
    const mapped = mapLabReport(
      ldlReport((result) => {
        result.biomarker.loinc_code = '2345-7';
        result.measurement = { type: 'numeric', numeric: 92, units: 'mg/dL' };
        delete result.source.collection_date;
      }),
    );
    expect(mapped.rows).toEqual([{ date: '2026-06-30', biomarker: 'fasting_glucose', value: 92, unit: 'mg/dL' }]);
  });

  test.each([
    [
      'unmatched biomarker',
      (r: Json) => (r.biomarker = { key: null }),
      'data.results[0].biomarker.key',
      'unmatched biomarker',
    ],
    ['no LOINC', (r: Json) => delete r.biomarker.loinc_code, 'data.results[0].biomarker.loinc_code', 'no LOINC code'],
    [
      'a bounded value',
      (r: Json) => (r.measurement = { type: 'bounded', bounded: { operator: 'lt', value: 7.5 }, ucum_code: 'mg/dL' }),
      'data.results[0].measurement',
      'a bounded value (like "<5"), not a number',
    ],
    [
      'a qualitative value',
      (r: Json) => (r.measurement = { type: 'qualitative', qualitative: { text: 'positive' } }),
      'data.results[0].measurement.type',
      'not numeric',
    ],
    [
      'no unit',
      (r: Json) => (r.measurement = { type: 'numeric', numeric: 3.1 }),
      'data.results[0].measurement',
      'no unit',
    ],
    [
      'a unit that does not convert',
      (r: Json) => (r.measurement.ucum_code = 'g'),
      'data.results[0].measurement.ucum_code',
      'unit: the unit does not convert to mg/dL, the unit ldl_cholesterol is stored in',
    ],
  ])('%s is skipped with why', (_, change, path, reason) => {
    const mapped = mapLabReport(ldlReport(change));
    expect(mapped).toEqual({ rows: [], skipped: [{ path, reason }] });
    expectNoValues(mapped, [3.1, 7.5]);
  });

  test('the same biomarker twice on one day keeps the first', () => {
    const body = ldlReport();
    body.data.results.push(structuredClone(body.data.results[0]));
    body.data.results[1].measurement.numeric = 3.4;
    const mapped = mapLabReport(body);
    expect(mapped.rows.map((r) => r.value)).toEqual([3.1]);
    expect(mapped.skipped).toEqual([
      { path: 'data.results[1]', reason: 'repeats the biomarker and day of data.results[0]' },
    ]);
  });

  test('a failed report or another event is a TerraMappingError', () => {
    expect(() => mapLabReport(example('lab_report_failed'))).toThrow(TerraMappingError);
    expect(() => mapLabReport(example('daily'))).toThrow(TerraMappingError);
  });
});
