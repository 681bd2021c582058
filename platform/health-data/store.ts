/** Writes a user's health data (profile, daily summaries, workouts, lab results) to Postgres. */
import { ulid } from 'ulid';
import type { Db } from '../db';
import { generateHealthData } from './synthetic';
import {
  formatIsoDate,
  parseIsoDate,
  type DailyRow,
  type HealthData,
  type HealthProfileRow,
  type WorkoutRow,
} from './records';

// Workouts and lab results need ids of their own; these prefixes belong in contracts/ids.ts (ID_PREFIXES).
const WORKOUT_ID_PREFIX = 'wko_';
const LAB_RESULT_ID_PREFIX = 'lab_';

export interface HealthDataCounts {
  days: number;
  workouts: number;
  biomarkers: number;
}

/** `YYYY-MM-DD` as the UTC-midnight Date that Prisma writes to a DATE column unchanged. */
function toDbDate(isoDate: string): Date {
  const date = parseIsoDate(isoDate);
  if (!date) throw new RangeError(`not a calendar date: ${isoDate}`);
  return date;
}

function dailyRowToDb(userId: string, row: DailyRow) {
  return {
    userId,
    date: toDbDate(row.date),
    steps: row.steps,
    sleepMinutes: row.sleep_minutes,
    deepSleepMinutes: row.deep_sleep_minutes,
    remSleepMinutes: row.rem_sleep_minutes,
    lightSleepMinutes: row.light_sleep_minutes,
    awakeMinutes: row.awake_minutes,
    restingHeartRate: row.resting_heart_rate,
    heartRateVariability: row.heart_rate_variability,
    stressManagementScore: row.stress_management_score,
    activeZoneMinutes: row.active_zone_minutes,
    sleepScore: row.sleep_score,
  };
}

/** Replaces everything the user had, in one transaction: readers see the old data set or the new one. */
export async function replaceUserHealthData(db: Db, userId: string, data: HealthData): Promise<HealthDataCounts> {
  const { profile } = data;
  await db.$transaction([
    db.dailySummary.deleteMany({ where: { userId } }),
    db.workout.deleteMany({ where: { userId } }),
    db.labBiomarker.deleteMany({ where: { userId } }),
    db.healthProfile.deleteMany({ where: { userId } }),
    db.healthProfile.create({
      data: {
        userId,
        sex: profile.sex,
        birthYear: profile.birth_year,
        heightCm: profile.height_cm,
        weightKg: profile.weight_kg,
      },
    }),
    db.dailySummary.createMany({ data: data.daily.map((row) => dailyRowToDb(userId, row)) }),
    db.workout.createMany({
      data: data.workouts.map((w) => ({
        id: WORKOUT_ID_PREFIX + ulid(),
        userId,
        date: toDbDate(w.date),
        type: w.type,
        durationMinutes: w.duration_minutes,
        calories: w.calories,
        avgHeartRate: w.avg_heart_rate,
      })),
    }),
    db.labBiomarker.createMany({
      data: data.biomarkers.map((b) => ({
        id: LAB_RESULT_ID_PREFIX + ulid(),
        userId,
        takenOn: toDbDate(b.taken_on),
        name: b.name,
        value: b.value,
        unit: b.unit,
      })),
    }),
  ]);
  return { days: data.daily.length, workouts: data.workouts.length, biomarkers: data.biomarkers.length };
}

/** Gives a user a synthetic history ending today (UTC). The default seed makes every demo user the same person. */
export async function seedDemoHealthData(
  db: Db,
  userId: string,
  { seed = 7, days = 180, endDate = new Date() }: { seed?: number; days?: number; endDate?: Date } = {},
): Promise<HealthDataCounts> {
  return replaceUserHealthData(db, userId, generateHealthData({ seed, days, endDate }));
}

type DailySummaryRecord = Awaited<ReturnType<Db['dailySummary']['findMany']>>[number];

function dailyRowFromDb(row: DailySummaryRecord): DailyRow {
  return {
    date: formatIsoDate(row.date),
    steps: row.steps,
    sleep_minutes: row.sleepMinutes,
    deep_sleep_minutes: row.deepSleepMinutes,
    rem_sleep_minutes: row.remSleepMinutes,
    light_sleep_minutes: row.lightSleepMinutes,
    awake_minutes: row.awakeMinutes,
    resting_heart_rate: row.restingHeartRate,
    heart_rate_variability: row.heartRateVariability,
    stress_management_score: row.stressManagementScore,
    active_zone_minutes: row.activeZoneMinutes,
    sleep_score: row.sleepScore,
  };
}

/** What the analysis of a user's data reads: the daily summaries and workouts oldest first, and the profile. */
export interface UserHealthData {
  profile: HealthProfileRow | null;
  daily: DailyRow[];
  workouts: WorkoutRow[];
}

export async function readUserHealthData(db: Db, userId: string): Promise<UserHealthData> {
  const [profile, daily, workouts] = await Promise.all([
    db.healthProfile.findUnique({ where: { userId } }),
    db.dailySummary.findMany({ where: { userId }, orderBy: { date: 'asc' } }),
    db.workout.findMany({ where: { userId }, orderBy: [{ date: 'asc' }, { id: 'asc' }] }),
  ]);
  return {
    profile: profile && {
      sex: profile.sex as HealthProfileRow['sex'],
      birth_year: profile.birthYear,
      height_cm: profile.heightCm,
      weight_kg: profile.weightKg,
    },
    daily: daily.map(dailyRowFromDb),
    workouts: workouts.map((w) => ({
      date: formatIsoDate(w.date),
      type: w.type as WorkoutRow['type'],
      duration_minutes: w.durationMinutes,
      calories: w.calories,
      avg_heart_rate: w.avgHeartRate,
    })),
  };
}
