/**
 * The people the eval asks about: synthetic users whose data holds known truths (the generator's
 * PLANTED_EFFECTS and INDEPENDENT_PAIR), drawn with seeds other than the demo's (7), so a question set
 * written while looking at the demo is not also the test. One more user's history goes in through the
 * CSV import with a few absurd readings and a two-week hole, as a real export can.
 */
import type { Pool } from 'pg';
import { createUserWithApiKey } from '../../platform/users';
import { importDailySummary } from '../../platform/health-data/csv-import';
import { replaceUserHealthData } from '../../platform/health-data/store';
import { DAILY_SUMMARY_COLUMNS, type DailyRow } from '../../contracts/health-records';
import { generateHealthData } from '../synthetic-data/generate';

const HISTORY_DAYS = 400;

export interface EvalUser {
  /** How the report names this user: `seed 11`, `imported (seed 42)`. */
  label: string;
  userId: string;
  apiKey: string;
  seed: number;
}

async function newUser(pool: Pool, role: string, seed: number): Promise<Omit<EvalUser, 'label'>> {
  const { user, apiKey } = await createUserWithApiKey(pool, `eval_${role}_${Date.now().toString(36)}`);
  return { userId: user.id, apiKey, seed };
}

/** A user with `HISTORY_DAYS` of synthetic history ending today (UTC), written through the health-data store. */
export async function createSyntheticUser(pool: Pool, role: string, seed: number): Promise<EvalUser> {
  const user = await newUser(pool, role, seed);
  await replaceUserHealthData(pool, user.userId, generateHealthData({ seed, days: HISTORY_DAYS, endDate: new Date() }));
  return { label: `seed ${seed}`, ...user };
}

/** What was done to the imported history, for the report. */
export interface ImportedDamage {
  gap: { from: string; to: string };
  outliers: Array<{ date: string; metric: keyof DailyRow; value: number }>;
}

/**
 * Days counted back from the last day (0 = the last day). The hole sits inside every "last 30/60/90
 * days" window; the outliers inside the last week and the last month. Every value is inside what the
 * import accepts (contracts/health-records.ts `accepted`), far outside what the person ever does.
 */
const GAP_DAYS_BACK = { from: 34, to: 21 };
const OUTLIERS: Array<{ daysBack: number; metric: keyof DailyRow; value: number }> = [
  { daysBack: 1, metric: 'steps', value: 58_000 },
  { daysBack: 3, metric: 'resting_heart_rate', value: 118 },
  { daysBack: 4, metric: 'resting_heart_rate', value: 31 },
  { daysBack: 5, metric: 'steps', value: 0 },
  { daysBack: 9, metric: 'stress_management_score', value: 0 },
  { daysBack: 12, metric: 'steps', value: 55_000 },
  { daysBack: 15, metric: 'heart_rate_variability', value: 240 },
];

function toCsv(rows: DailyRow[]): string {
  const lines = rows.map((row) => DAILY_SUMMARY_COLUMNS.map((column) => row[column] ?? '').join(','));
  return [DAILY_SUMMARY_COLUMNS.join(','), ...lines].join('\n') + '\n';
}

/**
 * A user whose profile, workouts and labs come from the generator and whose daily summary comes in
 * through `importDailySummary`, the path `npm run data:import` takes, with outliers and a gap.
 */
export async function createImportedUser(
  pool: Pool,
  seed: number,
): Promise<{ user: EvalUser; damage: ImportedDamage }> {
  const user = await newUser(pool, 'imported', seed);
  const data = generateHealthData({ seed, days: HISTORY_DAYS, endDate: new Date() });
  await replaceUserHealthData(pool, user.userId, { ...data, daily: [] });
  const last = data.daily.length - 1;
  const daily = data.daily.map((row) => ({ ...row }));
  const outliers = OUTLIERS.map(({ daysBack, metric, value }) => {
    const row = daily[last - daysBack];
    (row as Record<string, number | string | null>)[metric] = value;
    return { date: row.date, metric, value };
  });
  const kept = daily.filter((_, i) => i < last - GAP_DAYS_BACK.from || i > last - GAP_DAYS_BACK.to);
  await importDailySummary(pool, user.userId, toCsv(kept));
  return {
    user: { label: `imported (seed ${seed})`, ...user },
    damage: {
      gap: { from: daily[last - GAP_DAYS_BACK.from].date, to: daily[last - GAP_DAYS_BACK.to].date },
      outliers,
    },
  };
}
