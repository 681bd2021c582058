/**
 * The demo user's data: a synthetic history written through the platform's health-data store. Used by
 * `npm start`, `npm run demo:user`, the benchmarks and the tests; the service
 * itself never generates data.
 */
import type { Pool } from 'pg';
import { replaceUserHealthData, type HealthDataCounts } from '../../platform/health-data/store';
import { generateHealthData } from './generate';

/**
 * Long enough for every window people ask about: "this year" (365 days), "since March" at any time of
 * year, and a last-90-days trend against the 90 days before.
 */
export const DEMO_HISTORY_DAYS = 400;

/** Gives a user a synthetic history ending today (UTC). The default seed makes every demo user the same person. */
export async function seedDemoHealthData(
  pool: Pool,
  userId: string,
  { seed = 7, days = DEMO_HISTORY_DAYS, endDate = new Date() }: { seed?: number; days?: number; endDate?: Date } = {},
): Promise<HealthDataCounts> {
  return replaceUserHealthData(pool, userId, generateHealthData({ seed, days, endDate }));
}
