/** Writes a user's health data (profile, daily summaries, workouts, lab results) to Postgres. */
import { ulid } from 'ulid';
import type { Db } from '../db';
import { generateHealthData } from './synthetic';
import { parseIsoDate, type DailyRow, type HealthData } from './records';

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
