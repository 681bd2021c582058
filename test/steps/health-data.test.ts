import { DAILY_METRICS, METRIC_SPECS, WORKOUT_TYPES, type DailyRow } from '../../contracts/health-records';
import { DEMO_HISTORY_DAYS, seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { generateHealthData, INDEPENDENT_PAIR, PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';
import { createUserWithApiKey } from '../../platform/users';
import { createTestDatabase, type TestDatabase } from '../support/database';

const END = new Date('2026-11-22T15:30:00Z');
const generate = (seed: number, days = 180) => generateHealthData({ seed, days, endDate: END });
/** Seeds the planted effects are checked on: the demo default and two arbitrary others. */
const SEEDS = [7, 42, 20260101];

function averageRanks(values: number[]): number[] {
  const order = values.map((value, index) => ({ value, index })).sort((a, b) => a.value - b.value);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && order[end + 1].value === order[start].value) end++;
    for (let k = start; k <= end; k++) ranks[order[k].index] = (start + end) / 2 + 1;
    start = end + 1;
  }
  return ranks;
}

function pearson(a: number[], b: number[]): number {
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const [ma, mb] = [mean(a), mean(b)];
  let ab = 0;
  let aa = 0;
  let bb = 0;
  a.forEach((x, i) => {
    ab += (x - ma) * (b[i] - mb);
    aa += (x - ma) ** 2;
    bb += (b[i] - mb) ** 2;
  });
  return ab / Math.sqrt(aa * bb);
}

/** Spearman ρ over the days where both metrics are present (ties get average ranks). */
function spearman(rows: DailyRow[], feature: keyof DailyRow, target: keyof DailyRow): number {
  const pairs = rows.filter((row) => row[feature] !== null && row[target] !== null);
  return pearson(
    averageRanks(pairs.map((row) => Number(row[feature]))),
    averageRanks(pairs.map((row) => Number(row[target]))),
  );
}

/** Every broken range, Int or stage-sum rule, as readable strings (one expect per series keeps the test fast). */
function invariantViolations(daily: DailyRow[]): string[] {
  const violations: string[] = [];
  for (const row of daily) {
    for (const metric of DAILY_METRICS) {
      const value = row[metric];
      if (value === null) continue;
      const { typical, integer } = METRIC_SPECS[metric];
      if (value < typical[0] || value > typical[1]) violations.push(`${row.date} ${metric}=${value} out of range`);
      if (integer && !Number.isInteger(value)) violations.push(`${row.date} ${metric}=${value} not whole`);
    }
    const stages = [row.deep_sleep_minutes, row.rem_sleep_minutes, row.light_sleep_minutes, row.awake_minutes];
    if (row.sleep_minutes === null) continue;
    if (stages.some((minutes) => minutes === null)) violations.push(`${row.date} sleep without stages`);
    else if (stages.reduce((s, m) => s! + m!, 0) !== row.sleep_minutes) violations.push(`${row.date} stages ≠ sleep`);
  }
  return violations;
}

const present = (rows: DailyRow[], metric: (typeof DAILY_METRICS)[number]) =>
  rows.map((row) => row[metric]).filter((value): value is number => value !== null);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
const weekday = (row: { date: string }) => new Date(`${row.date}T00:00:00Z`).getUTCDay();

describe('generateHealthData', () => {
  test('is deterministic per seed, and different seeds are different people', () => {
    expect(generate(7)).toEqual(generate(7));
    const [a, b] = [generate(7), generate(8)];
    expect(b.daily).not.toEqual(a.daily);
    expect(b.profile).not.toEqual(a.profile);
  });

  test('covers `days` consecutive calendar days ending on endDate', () => {
    const { daily } = generate(7, 180);
    expect(daily).toHaveLength(180);
    expect(daily[179].date).toBe('2026-11-22');
    expect(daily[0].date).toBe('2026-05-27');
    for (let i = 1; i < daily.length; i++) {
      expect(Date.parse(daily[i].date) - Date.parse(daily[i - 1].date)).toBe(86_400_000);
    }
  });

  test('values are in range, whole where the schema says Int, and the sleep stages add up (seeds 1–50)', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { daily } = generate(seed);
      expect(invariantViolations(daily)).toEqual([]);
    }
  });

  test.each(SEEDS)('seed %i: 5–11 %% of each metric is missing, HRV more often than most', (seed) => {
    const { daily } = generate(seed);
    const rate = (metric: (typeof DAILY_METRICS)[number]) => 1 - present(daily, metric).length / daily.length;
    for (const metric of DAILY_METRICS) {
      expect(rate(metric)).toBeGreaterThanOrEqual(0.05);
      expect(rate(metric)).toBeLessThanOrEqual(0.11);
    }
    expect(rate('heart_rate_variability')).toBeGreaterThan(rate('steps'));
    // Not one shared mask: the day-time and night-time gaps fall on different days.
    const stepsGaps = daily.filter((row) => row.steps === null).map((row) => row.date);
    const sleepGaps = daily.filter((row) => row.sleep_minutes === null).map((row) => row.date);
    expect(stepsGaps).not.toEqual(sleepGaps);
  });

  describe.each(SEEDS)('seed %i: planted effects are measurable', (seed) => {
    const { daily } = generate(seed);
    test.each(PLANTED_EFFECTS.filter((effect) => effect.kind === 'association'))(
      '$feature → $target',
      ({ feature, target, expected_sign, expected_size }) => {
        const rho = spearman(daily, feature, target!);
        expect(Math.sign(rho)).toBe(expected_sign);
        expect(Math.abs(rho)).toBeGreaterThanOrEqual(expected_size[0]);
        expect(Math.abs(rho)).toBeLessThanOrEqual(expected_size[1]);
      },
    );

    test.each(PLANTED_EFFECTS.filter((effect) => effect.kind === 'trend'))(
      '$feature trend: last 30 days vs the 30 before, in SD units',
      ({ feature, expected_sign, expected_size }) => {
        const values = daily.map((row) => row[feature]);
        const windowMean = (slice: (number | null)[]) => mean(slice.filter((v): v is number => v !== null));
        const change =
          (windowMean(values.slice(-30)) - windowMean(values.slice(-60, -30))) / sd(present(daily, feature));
        expect(Math.sign(change)).toBe(expected_sign);
        expect(Math.abs(change)).toBeGreaterThanOrEqual(expected_size[0]);
        expect(Math.abs(change)).toBeLessThanOrEqual(expected_size[1]);
      },
    );

    test(`${INDEPENDENT_PAIR.feature} and ${INDEPENDENT_PAIR.target} are independent (|ρ| < 0.15)`, () => {
      expect(Math.abs(spearman(daily, INDEPENDENT_PAIR.feature, INDEPENDENT_PAIR.target))).toBeLessThan(0.15);
    });
  });

  test('weekday effects: longer sleep on Friday and Saturday nights, steps differ between weekdays and weekends', () => {
    for (const seed of SEEDS) {
      const { daily } = generate(seed);
      const weekendNight = daily.filter((row) => [5, 6].includes(weekday(row)));
      const otherNights = daily.filter((row) => ![5, 6].includes(weekday(row)));
      expect(
        mean(present(weekendNight, 'sleep_minutes')) - mean(present(otherNights, 'sleep_minutes')),
      ).toBeGreaterThan(15);

      const weekendSteps = mean(
        present(
          daily.filter((row) => [0, 6].includes(weekday(row))),
          'steps',
        ),
      );
      const weekdaySteps = mean(
        present(
          daily.filter((row) => ![0, 6].includes(weekday(row))),
          'steps',
        ),
      );
      expect(Math.abs(weekendSteps / weekdaySteps - 1)).toBeGreaterThan(0.1);
    }
  });

  test('workouts: 2–5 per full week, known types, more active zone minutes on workout days', () => {
    const { daily, workouts } = generate(7);
    expect(new Set(workouts.map((w) => w.type)).size).toBeGreaterThan(1);
    for (const workout of workouts) {
      expect(WORKOUT_TYPES).toContain(workout.type);
      expect(workout.duration_minutes).toBeGreaterThanOrEqual(15);
      expect(workout.duration_minutes).toBeLessThanOrEqual(120);
      expect(workout.calories).toBeGreaterThan(0);
      expect(workout.avg_heart_rate).toBeGreaterThan(80);
      expect(workout.avg_heart_rate).toBeLessThan(200);
    }
    // Workouts that cover ground have a distance at a plausible speed (0.1 km rounding aside); the others none.
    const speedKmh: Record<string, [number, number]> = {
      running: [9, 12],
      cycling: [18, 28],
      walking: [4.5, 6],
      swimming: [2, 3],
    };
    for (const seed of SEEDS) {
      for (const { type, duration_minutes, distance_km } of generate(seed).workouts) {
        const range = speedKmh[type];
        if (!range) {
          expect([type, distance_km]).toEqual([type, null]);
          continue;
        }
        expect(typeof distance_km).toBe('number');
        const km = distance_km as number;
        expect(km).toBe(Math.round(km * 10) / 10);
        expect(km - 0.05).toBeLessThanOrEqual((range[1] * duration_minutes) / 60);
        expect(km + 0.05).toBeGreaterThanOrEqual((range[0] * duration_minutes) / 60);
      }
    }
    // Full Monday–Sunday weeks inside the series.
    const firstMonday = daily.findIndex((row) => weekday(row) === 1);
    for (let start = firstMonday; start + 7 <= daily.length; start += 7) {
      const week = new Set(daily.slice(start, start + 7).map((row) => row.date));
      const count = workouts.filter((w) => week.has(w.date)).length;
      expect(count).toBeGreaterThanOrEqual(2);
      expect(count).toBeLessThanOrEqual(5);
    }
    const workoutDays = new Set(workouts.map((w) => w.date));
    const zoneMinutes = (withWorkout: boolean) =>
      mean(
        present(
          daily.filter((row) => workoutDays.has(row.date) === withWorkout),
          'active_zone_minutes',
        ),
      );
    expect(zoneMinutes(true)).toBeGreaterThan(zoneMinutes(false) + 10);
  });

  test('profile and lab panels are plausible and consistent', () => {
    const { profile, biomarkers } = generate(7);
    expect(['female', 'male']).toContain(profile.sex);
    expect(2026 - profile.birth_year).toBeGreaterThanOrEqual(25);
    expect(2026 - profile.birth_year).toBeLessThanOrEqual(65);
    const bmi = profile.weight_kg / (profile.height_cm / 100) ** 2;
    expect(bmi).toBeGreaterThan(17);
    expect(bmi).toBeLessThan(36);

    const panels = new Map<string, Map<string, { value: number; unit: string }>>();
    for (const { taken_on, name, value, unit } of biomarkers) {
      if (!panels.has(taken_on)) panels.set(taken_on, new Map());
      panels.get(taken_on)!.set(name, { value, unit });
    }
    expect(panels.size).toBeGreaterThanOrEqual(2);
    expect(panels.size).toBeLessThanOrEqual(3);
    for (const panel of panels.values()) {
      expect([...panel.keys()].sort()).toEqual(
        [
          'fasting_glucose',
          'ferritin',
          'hba1c',
          'hdl_cholesterol',
          'hs_crp',
          'ldl_cholesterol',
          'total_cholesterol',
          'triglycerides',
          'tsh',
          'vitamin_d',
        ].sort(),
      );
      expect(panel.get('ldl_cholesterol')!.unit).toBe('mg/dL');
      expect(panel.get('hba1c')!.unit).toBe('%');
      const total =
        panel.get('ldl_cholesterol')!.value +
        panel.get('hdl_cholesterol')!.value +
        panel.get('triglycerides')!.value / 5;
      expect(Math.abs(panel.get('total_cholesterol')!.value - total)).toBeLessThanOrEqual(0.5);
    }
  });
});

describe('seedDemoHealthData', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  test('writes the generated data for one user and replaces it on a second run', async () => {
    const { user } = await createUserWithApiKey(t.pool, 'seeded');
    const { user: other } = await createUserWithApiKey(t.pool, 'other');
    await seedDemoHealthData(t.pool, other.id, { seed: 1, days: 30, endDate: END });

    const expected = generateHealthData({ seed: 7, days: DEMO_HISTORY_DAYS, endDate: END });
    const counts = await seedDemoHealthData(t.pool, user.id, { endDate: END });
    expect(counts).toEqual({
      days: DEMO_HISTORY_DAYS,
      workouts: expected.workouts.length,
      biomarkers: expected.biomarkers.length,
    });
    // A second run replaces instead of duplicating, and leaves other users alone.
    await seedDemoHealthData(t.pool, user.id, { endDate: END });

    expect(await t.db.dailySummary.count({ where: { userId: user.id } })).toBe(DEMO_HISTORY_DAYS);
    expect(await t.db.workout.count({ where: { userId: user.id } })).toBe(expected.workouts.length);
    expect(await t.db.labBiomarker.count({ where: { userId: user.id } })).toBe(expected.biomarkers.length);
    expect(await t.db.dailySummary.count({ where: { userId: other.id } })).toBe(30);

    const last = expected.daily[179];
    const stored = await t.db.dailySummary.findUniqueOrThrow({
      where: { userId_date: { userId: user.id, date: new Date(`${last.date}T00:00:00Z`) } },
    });
    expect(stored).toMatchObject({
      steps: last.steps,
      sleepMinutes: last.sleep_minutes,
      deepSleepMinutes: last.deep_sleep_minutes,
      restingHeartRate: last.resting_heart_rate,
      heartRateVariability: last.heart_rate_variability,
    });
    const profile = await t.db.healthProfile.findUniqueOrThrow({ where: { userId: user.id } });
    expect(profile).toMatchObject({ sex: expected.profile.sex, birthYear: expected.profile.birth_year });
    const workout = await t.db.workout.findFirstOrThrow({ where: { userId: user.id }, orderBy: { date: 'asc' } });
    expect(workout.id).toMatch(/^wko_/);
    expect(workout.date.toISOString().slice(0, 10)).toBe(expected.workouts[0].date);
    // Distances are stored as generated: the workouts that cover ground have one, the others none.
    const { rows: storedWorkouts } = await t.pool.query<{ date: string; type: string; distance_km: number | null }>(
      `SELECT to_char(date, 'YYYY-MM-DD') AS date, type, distance_km FROM workouts WHERE user_id = $1 ORDER BY date`,
      [user.id],
    );
    expect(storedWorkouts).toEqual(
      expected.workouts.map(({ date, type, distance_km }) => ({ date, type, distance_km: distance_km ?? null })),
    );
    expect(storedWorkouts.some((w) => w.distance_km !== null)).toBe(true);
  });
});
