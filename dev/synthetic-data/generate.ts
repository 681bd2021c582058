/**
 * Synthetic health data: a realistic person whose data holds a few known truths, so every pipeline path
 * (association, trend, rejection by the gates) has something real to find. Pure and deterministic per seed.
 *
 * How a person is built:
 * - Person-level means (steps, sleep, resting heart rate, HRV, …) are drawn from the random seed, so two seeds
 *   are two different people, not one person with different noise.
 * - Day-to-day noise is AR(1): yesterday carries over into today.
 * - Weekday effects: a person is either more active on weekdays (commuter) or on weekends; everyone sleeps
 *   longer on Friday and Saturday nights.
 * - A row's sleep fields describe the night that starts on the evening of that row's date, so the day's
 *   activity can influence them (the effect runs forward in time).
 * - About 8 % of values per metric are missing (HRV 10 %): a night without the watch blanks every sleep
 *   field and HRV together, an off-wrist day blanks steps and active zone minutes together, and each metric
 *   also loses a few days of its own. Whenever sleep_minutes is present, deep + rem + light + awake equal it.
 * - Running, cycling, walking and swimming workouts have a distance at a plausible speed for their type; strength,
 *   yoga and HIIT have none (null).
 *
 * Planted true effects (also exported as PLANTED_EFFECTS for tests and the gates' checks):
 * (a) active_zone_minutes on day d → deep_sleep_minutes that night: positive, Spearman ρ ≈ 0.4–0.6.
 * (b) steps → stress_management_score: positive, moderate (ρ ≈ 0.3–0.55).
 * (c) resting_heart_rate falls by about 6–8 bpm over the last 50 days (the person started training):
 *     the mean of the last 30 days is ≥ 0.5 SD below the mean of the 30 days before.
 * (d) heart_rate_variability moves against resting_heart_rate: negative, ρ ≈ −0.35 to −0.65.
 * Deliberately independent: rem_sleep_minutes has no driver in common with steps (no weekday effect, no
 * activity effect), exported as INDEPENDENT_PAIR so tests can check that the gates reject it.
 */
import { SeededRandom } from './random';
import {
  formatIsoDate,
  METRIC_SPECS,
  WORKOUT_TYPES,
  type BiomarkerRow,
  type DailyMetric,
  type DailyRow,
  type HealthData,
  type HealthProfileRow,
  type WorkoutRow,
  type WorkoutType,
} from '../../contracts/health-records';

export interface PlantedEffect {
  feature: DailyMetric;
  /** null for a trend: the feature changes over time on its own. */
  target: DailyMetric | null;
  kind: 'association' | 'trend';
  /** Sign of Spearman ρ for an association; direction of the change (last 30 days vs prior 30) for a trend. */
  expected_sign: 1 | -1;
  /** Expected |ρ| for an association; |change| in units of the metric's SD for a trend. */
  expected_size: readonly [number, number];
  description: string;
}

export const PLANTED_EFFECTS: readonly PlantedEffect[] = [
  {
    feature: 'active_zone_minutes',
    target: 'deep_sleep_minutes',
    kind: 'association',
    expected_sign: 1,
    expected_size: [0.4, 0.6],
    description: 'More active zone minutes during the day, more deep sleep the following night.',
  },
  {
    feature: 'steps',
    target: 'stress_management_score',
    kind: 'association',
    expected_sign: 1,
    expected_size: [0.3, 0.55],
    description: 'Days with more steps have a better stress management score.',
  },
  {
    feature: 'resting_heart_rate',
    target: null,
    kind: 'trend',
    expected_sign: -1,
    expected_size: [0.5, 2.5],
    description: 'Resting heart rate has been falling for the last ~50 days (training effect).',
  },
  {
    feature: 'heart_rate_variability',
    target: 'resting_heart_rate',
    kind: 'association',
    expected_sign: -1,
    expected_size: [0.35, 0.65],
    description: 'Higher resting heart rate goes with lower heart rate variability.',
  },
];

export const INDEPENDENT_PAIR = {
  feature: 'steps',
  target: 'rem_sleep_minutes',
  description: 'REM sleep is generated with no input from steps, the weekday or activity: any correlation is noise.',
} as const satisfies { feature: DailyMetric; target: DailyMetric; description: string };

export interface GenerateOptions {
  seed: number;
  days: number;
  /** Last day of the series (its UTC calendar date is used). */
  endDate: Date;
}

const DAY_MS = 86_400_000;

interface WorkoutKind {
  duration: readonly [mean: number, sd: number];
  /** Share of the workout spent in heart-rate zones that count as active zone minutes. */
  zoneShare: number;
  /** Share of the heart-rate reserve (max − resting) the workout averages. */
  intensity: number;
  /** At 70 kg. */
  kcalPerMinute: number;
  stepsPerMinute: number;
}

const WORKOUT_KINDS: Record<WorkoutType, WorkoutKind> = {
  running: { duration: [40, 10], zoneShare: 0.85, intensity: 0.75, kcalPerMinute: 11, stepsPerMinute: 160 },
  cycling: { duration: [55, 15], zoneShare: 0.7, intensity: 0.65, kcalPerMinute: 9, stepsPerMinute: 0 },
  strength: { duration: [45, 10], zoneShare: 0.25, intensity: 0.45, kcalPerMinute: 6, stepsPerMinute: 10 },
  yoga: { duration: [45, 10], zoneShare: 0.05, intensity: 0.3, kcalPerMinute: 3.5, stepsPerMinute: 5 },
  walking: { duration: [50, 15], zoneShare: 0.35, intensity: 0.4, kcalPerMinute: 4.5, stepsPerMinute: 110 },
  swimming: { duration: [40, 10], zoneShare: 0.65, intensity: 0.6, kcalPerMinute: 9, stepsPerMinute: 0 },
  HIIT: { duration: [25, 5], zoneShare: 0.9, intensity: 0.8, kcalPerMinute: 12, stepsPerMinute: 40 },
};

/**
 * The speed range (km/h) of a workout that covers ground; none for one that stays in place. Kept apart from
 * WORKOUT_KINDS: a workout's distance draws nothing from the random streams (see distanceKm).
 */
const SPEED_KMH: Record<WorkoutType, readonly [min: number, max: number] | null> = {
  running: [9, 12],
  cycling: [18, 28],
  strength: null,
  yoga: null,
  walking: [4.5, 6],
  swimming: [2, 3],
  HIIT: null,
};

const clamp = (value: number, [min, max]: readonly [number, number]) => Math.min(max, Math.max(min, value));
const roundTo = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;

/**
 * How far a workout went, to 0.1 km: the middle of its type's speed range, scaled by its effort (the calories
 * it burned against the type's typical rate: a harder session burns more and goes faster), kept within the
 * range. Derived from values the workout already has, never drawn: a new draw from the workouts' stream would
 * shift every value after it, and other tests depend on the exact values each seed gives.
 */
function distanceKm(type: WorkoutType, duration: number, effort: number): number | null {
  const range = SPEED_KMH[type];
  if (range === null) return null;
  const speed = clamp(((range[0] + range[1]) / 2) * effort, range);
  return roundTo((speed * duration) / 60, 1);
}

function standardize(series: number[]): number[] {
  const mean = series.reduce((a, b) => a + b, 0) / series.length;
  const sd = Math.sqrt(series.reduce((a, b) => a + (b - mean) ** 2, 0) / series.length) || 1;
  return series.map((x) => (x - mean) / sd);
}

/** `share` of a driver plus independent AR(1) noise, with unit variance: the driver's correlation is ~share. */
const mix = (driver: number, noise: number, share: number) => share * driver + Math.sqrt(1 - share * share) * noise;

function drawPerson(seed: number, endYear: number) {
  const rng = new SeededRandom(seed, 'person');
  const sex = rng.uniform() < 0.5 ? 'female' : 'male';
  const age = rng.integer(25, 65);
  const heightCm = rng.normal(sex === 'female' ? 164 : 177, sex === 'female' ? 6.5 : 7);
  const bmi = clamp(rng.normal(24.5, 3), [18.5, 35]);
  const profile: HealthProfileRow = {
    sex,
    birth_year: endYear - age,
    height_cm: roundTo(heightCm, 1),
    weight_kg: roundTo(bmi * (heightCm / 100) ** 2, 1),
  };
  return {
    profile,
    age,
    stepsMean: clamp(rng.normal(8_500, 1_800), [4_500, 13_000]),
    stepsSd: rng.normal(1_800, 300),
    /** Commuters walk more on weekdays; others save their walking for the weekend. */
    weekendStepsFactor: rng.uniform() < 0.5 ? rng.normal(0.72, 0.05) : rng.normal(1.28, 0.05),
    sleepMean: clamp(rng.normal(430, 20), [390, 470]),
    weekendExtraSleep: clamp(rng.normal(40, 10), [20, 60]),
    deepMean: clamp(rng.normal(80, 10), [60, 100]),
    remMean: clamp(rng.normal(95, 10), [75, 115]),
    awakeMean: clamp(rng.normal(35, 6), [20, 50]),
    rhrMean: clamp(rng.normal(63, 4.5), [54, 72]),
    rhrDrop: clamp(rng.normal(7, 0.5), [6, 8]),
    hrvMedian: clamp(rng.normal(48, 10), [28, 70]),
    stressMean: clamp(rng.normal(60, 8), [40, 75]),
    baselineZoneMinutes: clamp(rng.normal(12, 4), [4, 20]),
    workoutsPerWeek: clamp(rng.normal(3.5, 0.7), [2.3, 4.7]),
    favouriteWorkouts: rng.sample(WORKOUT_TYPES, 3),
  };
}
type Person = ReturnType<typeof drawPerson>;

/** One workout on 2–5 days of each Monday-to-Sunday week; weeks cut by the series' ends keep their share. */
function scheduleWorkouts(seed: number, person: Person, dates: Date[]): Map<number, WorkoutType> {
  const rng = new SeededRandom(seed, 'workout-schedule');
  const byDay = new Map<number, WorkoutType>();
  const firstMonday = dates[0].getTime() - ((dates[0].getUTCDay() + 6) % 7) * DAY_MS;
  for (let weekStart = firstMonday; weekStart <= dates[dates.length - 1].getTime(); weekStart += 7 * DAY_MS) {
    const count = Math.round(clamp(rng.normal(person.workoutsPerWeek, 0.8), [2, 5]));
    for (const weekday of rng.sample([0, 1, 2, 3, 4, 5, 6], count)) {
      const index = Math.round((weekStart + weekday * DAY_MS - dates[0].getTime()) / DAY_MS);
      // Mostly the person's favourite sports, now and then something else.
      const type = rng.uniform() < 0.85 ? rng.pick(person.favouriteWorkouts) : rng.pick(WORKOUT_TYPES);
      if (index >= 0 && index < dates.length) byDay.set(index, type);
    }
  }
  return byDay;
}

/**
 * Days each metric goes missing. Exact counts rather than coin flips keep the rate near 8 % for every seed
 * and length; shared blocks (a night without the watch, an off-wrist day) make the gaps realistic.
 */
function drawMissingDays(seed: number, days: number): Record<DailyMetric, Set<number>> {
  const rng = new SeededRandom(seed, 'missing');
  const all = Array.from({ length: days }, (_, i) => i);
  const share = (rate: number) => Math.round(days * rate);
  const pickFrom = (pool: number[], rate: number) => new Set(rng.sample(pool, share(rate)));
  const plus = (base: Set<number>, rate: number) => {
    const others = all.filter((day) => !base.has(day));
    return new Set([...base, ...pickFrom(others, rate)]);
  };

  const noNight = pickFrom(all, 0.08);
  const offWrist = pickFrom(all, 0.04);
  return {
    sleep_minutes: noNight,
    deep_sleep_minutes: noNight,
    rem_sleep_minutes: noNight,
    light_sleep_minutes: noNight,
    awake_minutes: noNight,
    sleep_score: noNight,
    heart_rate_variability: plus(noNight, 0.02),
    steps: plus(offWrist, 0.04),
    active_zone_minutes: plus(offWrist, 0.04),
    stress_management_score: pickFrom(all, 0.08),
    resting_heart_rate: pickFrom(all, 0.08),
  };
}

interface Night {
  sleep: number;
  deep: number;
  rem: number;
  light: number;
  awake: number;
}

/** Rounds the stages and gives light sleep the remainder, so the four add up to the total exactly. */
function splitNight(total: number, deep: number, rem: number, awake: number): Night {
  const sleep = Math.round(clamp(total, METRIC_SPECS.sleep_minutes.typical));
  const parts = [
    clamp(deep, METRIC_SPECS.deep_sleep_minutes.typical),
    clamp(rem, METRIC_SPECS.rem_sleep_minutes.typical),
    clamp(awake, METRIC_SPECS.awake_minutes.typical),
  ];
  // A very short night cannot hold average deep and REM sleep: shrink them so light sleep keeps its minimum.
  const room = sleep - METRIC_SPECS.light_sleep_minutes.typical[0];
  const rounded = parts.map(Math.round);
  const others = parts[0] + parts[1] + parts[2];
  const [d, r, a] =
    rounded[0] + rounded[1] + rounded[2] > room ? parts.map((x) => Math.floor((x * room) / others)) : rounded;
  return { sleep, deep: d, rem: r, awake: a, light: sleep - d - r - a };
}

export function generateHealthData({ seed, days, endDate }: GenerateOptions): HealthData {
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`days must be a positive integer, got ${days}`);
  const end = Date.UTC(endDate.getUTCFullYear(), endDate.getUTCMonth(), endDate.getUTCDate());
  const dates = Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * DAY_MS));
  const person = drawPerson(seed, endDate.getUTCFullYear());
  const workoutTypes = scheduleWorkouts(seed, person, dates);
  const rng = new SeededRandom(seed, 'daily');
  const noise = {
    steps: rng.ar1(days, 0.5),
    zone: rng.ar1(days, 0.2),
    sleep: rng.ar1(days, 0.3),
    deep: rng.ar1(days, 0.3),
    rem: rng.ar1(days, 0.15),
    awake: rng.ar1(days, 0.2),
    rhr: rng.ar1(days, 0.6),
    hrv: rng.ar1(days, 0.5),
    stress: rng.ar1(days, 0.4),
    score: rng.ar1(days, 0.2),
  };
  const workoutRng = new SeededRandom(seed, 'workouts');
  const isWeekend = (i: number) => [0, 6].includes(dates[i].getUTCDay());
  const isWeekendNight = (i: number) => [5, 6].includes(dates[i].getUTCDay());

  // (c): flat, then a linear fall over the last 50 days.
  const rhr = noise.rhr.map((z, i) => {
    const intoTraining = Math.max(0, i - (days - 50)) / 49;
    return clamp(person.rhrMean - person.rhrDrop * intoTraining + 2.2 * z, METRIC_SPECS.resting_heart_rate.typical);
  });

  // Workouts come before the daily metrics: they add active zone minutes and steps.
  const maxHeartRate = 208 - 0.7 * person.age;
  const workouts = new Map<number, { row: WorkoutRow; zoneMinutes: number; steps: number }>();
  for (const [i, type] of workoutTypes) {
    const kind = WORKOUT_KINDS[type];
    const duration = Math.round(clamp(workoutRng.normal(...kind.duration), [15, 120]));
    const weightFactor = person.profile.weight_kg / 70;
    const typicalCalories = kind.kcalPerMinute * duration * weightFactor;
    const calories = Math.round(typicalCalories * workoutRng.logNormal(1, 0.1));
    workouts.set(i, {
      row: {
        date: formatIsoDate(dates[i]),
        type,
        duration_minutes: duration,
        distance_km: distanceKm(type, duration, calories / typicalCalories),
        calories,
        avg_heart_rate: Math.round(rhr[i] + kind.intensity * (maxHeartRate - rhr[i]) + workoutRng.normal(0, 5)),
      },
      zoneMinutes: duration * kind.zoneShare * workoutRng.logNormal(1, 0.15),
      steps: duration * kind.stepsPerMinute * workoutRng.logNormal(1, 0.1),
    });
  }

  const zoneMinutes = noise.zone.map((z, i) =>
    clamp(person.baselineZoneMinutes * Math.exp(0.5 * z) + (workouts.get(i)?.zoneMinutes ?? 0), [0, 180]),
  );
  const steps = noise.steps.map((z, i) =>
    clamp(
      person.stepsMean * (isWeekend(i) ? person.weekendStepsFactor : 1) +
        person.stepsSd * z +
        (workouts.get(i)?.steps ?? 0),
      METRIC_SPECS.steps.typical,
    ),
  );
  const zZone = standardize(zoneMinutes);
  const zSteps = standardize(steps);
  const zRhr = standardize(rhr);

  const nights = dates.map((_, i) =>
    splitNight(
      person.sleepMean + (isWeekendNight(i) ? person.weekendExtraSleep : 0) + 35 * noise.sleep[i],
      person.deepMean + 15 * mix(zZone[i], noise.deep[i], 0.55), // (a)
      person.remMean + 15 * noise.rem[i], // independent of everything, see INDEPENDENT_PAIR
      person.awakeMean + 9 * noise.awake[i],
    ),
  );

  const missing = drawMissingDays(seed, days);
  const daily = dates.map((date, i): DailyRow => {
    const night = nights[i];
    const values: Record<DailyMetric, number> = {
      steps: Math.round(steps[i]),
      sleep_minutes: night.sleep,
      deep_sleep_minutes: night.deep,
      rem_sleep_minutes: night.rem,
      light_sleep_minutes: night.light,
      awake_minutes: night.awake,
      resting_heart_rate: Math.round(rhr[i]),
      heart_rate_variability: roundTo(
        clamp(
          person.hrvMedian * Math.exp(0.2 * mix(-zRhr[i], noise.hrv[i], 0.52)), // (d)
          METRIC_SPECS.heart_rate_variability.typical,
        ),
        1,
      ),
      stress_management_score: Math.round(
        clamp(
          person.stressMean + 12 * mix(zSteps[i], noise.stress[i], 0.45), // (b)
          METRIC_SPECS.stress_management_score.typical,
        ),
      ),
      active_zone_minutes: Math.round(zoneMinutes[i]),
      sleep_score: Math.round(
        clamp(
          76 + 0.05 * (night.sleep - 420) + 0.12 * (night.deep - 80) - 0.25 * (night.awake - 35) + 4 * noise.score[i],
          METRIC_SPECS.sleep_score.typical,
        ),
      ),
    };
    const row = { date: formatIsoDate(date) } as DailyRow;
    for (const metric of Object.keys(values) as DailyMetric[]) {
      row[metric] = missing[metric].has(i) ? null : values[metric];
    }
    return row;
  });

  return {
    profile: person.profile,
    daily,
    workouts: [...workouts.values()].map((w) => w.row),
    biomarkers: drawLabPanels(seed, person, dates),
  };
}

/** 2–3 blood panels spread over the period; each marker varies a little around the person's own level. */
function drawLabPanels(seed: number, person: Person, dates: Date[]): BiomarkerRow[] {
  const rng = new SeededRandom(seed, 'labs');
  const female = person.profile.sex === 'female';
  const level = {
    ldl: clamp(rng.normal(115, 25), [60, 190]),
    hdl: clamp(rng.normal(female ? 62 : 50, female ? 12 : 10), [30, 100]),
    triglycerides: clamp(rng.logNormal(105, 0.35), [40, 400]),
    hba1c: clamp(rng.normal(5.3, 0.25), [4.5, 6.4]),
    ferritin: clamp(rng.logNormal(female ? 60 : 140, 0.5), [10, 500]),
    vitaminD: clamp(rng.normal(30, 8), [10, 70]),
    tsh: clamp(rng.logNormal(1.8, 0.35), [0.4, 5]),
    hsCrp: clamp(rng.logNormal(1, 0.6), [0.1, 10]),
  };
  const positions = rng.uniform() < 0.5 ? [0.2, 0.85] : [0.1, 0.5, 0.9];
  const panelDays = new Set(positions.map((p) => Math.min(dates.length - 1, Math.round(p * (dates.length - 1)))));

  return [...panelDays].flatMap((day) => {
    const takenOn = formatIsoDate(dates[day]);
    const ldl = Math.round(level.ldl + rng.normal(0, 8));
    const hdl = Math.round(level.hdl + rng.normal(0, 4));
    const triglycerides = Math.round(level.triglycerides * rng.logNormal(1, 0.15));
    const hba1c = roundTo(level.hba1c + rng.normal(0, 0.1), 1);
    const marker = (name: string, value: number, unit: string): BiomarkerRow => ({
      taken_on: takenOn,
      name,
      value,
      unit,
    });
    return [
      marker('ldl_cholesterol', ldl, 'mg/dL'),
      marker('hdl_cholesterol', hdl, 'mg/dL'),
      marker('triglycerides', triglycerides, 'mg/dL'),
      // Friedewald: total = LDL + HDL + triglycerides / 5, so the panel is internally consistent.
      marker('total_cholesterol', Math.round(ldl + hdl + triglycerides / 5), 'mg/dL'),
      marker('hba1c', hba1c, '%'),
      marker('fasting_glucose', Math.round(88 + (hba1c - 5.3) * 15 + rng.normal(0, 5)), 'mg/dL'),
      marker('ferritin', Math.round(level.ferritin * rng.logNormal(1, 0.1)), 'ng/mL'),
      marker('vitamin_d', roundTo(level.vitaminD + rng.normal(0, 3), 1), 'ng/mL'),
      marker('tsh', roundTo(level.tsh * rng.logNormal(1, 0.1), 2), 'mIU/L'),
      marker('hs_crp', roundTo(clamp(level.hsCrp * rng.logNormal(1, 0.3), [0.1, 10]), 1), 'mg/L'),
    ];
  });
}
