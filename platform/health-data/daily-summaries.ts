/**
 * A user's daily summaries one range at a time: the upsert that the CSV import and the API share, pages
 * oldest first, and deletion of a range. Rows reach here already validated (./validate.ts).
 * Calendar days cross the SQL boundary as `YYYY-MM-DD` text both ways, as in ./store.ts.
 */
import type { Pool } from 'pg';
import { DAILY_METRICS, METRIC_SPECS, type DailyRow } from '../../contracts/health-records';

/** An inclusive range of days; either end may be open. */
export interface DayRange {
  from?: string;
  to?: string;
}

const COLUMNS = DAILY_METRICS.join(', ');

/**
 * Upserts the rows by (user, date): a day sent again is updated, the others are kept. The metric names
 * are the table's column names. One statement over column arrays (unnest) is atomic, needs no per-row
 * round trips and stays under Postgres's 65,535 bind-parameter limit however many rows there are.
 */
export async function upsertDailyRows(
  pool: Pool,
  userId: string,
  rows: readonly DailyRow[],
): Promise<{ inserted: number; updated: number }> {
  if (rows.length === 0) return { inserted: 0, updated: 0 };
  const updates = DAILY_METRICS.map((metric) => `${metric} = EXCLUDED.${metric}`).join(', ');
  const arrays = DAILY_METRICS.map((metric, i) => `$${i + 3}::${METRIC_SPECS[metric].integer ? 'int[]' : 'float8[]'}`);
  // xmax is 0 on a freshly inserted row version and set on one rewritten by ON CONFLICT DO UPDATE.
  const written = await pool.query<{ inserted: boolean }>(
    `INSERT INTO daily_summaries (user_id, date, ${COLUMNS})
     SELECT $1, day.*
     FROM unnest($2::date[], ${arrays.join(', ')}) AS day
     ON CONFLICT (user_id, date) DO UPDATE SET ${updates}
     RETURNING (xmax = 0) AS inserted`,
    [userId, rows.map((row) => row.date), ...DAILY_METRICS.map((metric) => rows.map((row) => row[metric]))],
  );
  const inserted = written.rows.filter((row) => row.inserted).length;
  return { inserted, updated: written.rows.length - inserted };
}

/**
 * One page of the user's days in the range, oldest first, starting after the day `after` (the last
 * day of the previous page). `hasMore` says whether a further page holds anything.
 */
export async function listDailyPage(
  pool: Pool,
  userId: string,
  range: DayRange & { after?: string; limit: number },
): Promise<{ rows: DailyRow[]; hasMore: boolean }> {
  const { rows } = await pool.query<DailyRow>(
    `SELECT to_char(date, 'YYYY-MM-DD') AS date, ${COLUMNS} FROM daily_summaries
     WHERE user_id = $1 AND ($2::date IS NULL OR date >= $2::date) AND ($3::date IS NULL OR date <= $3::date)
       AND ($4::date IS NULL OR date > $4::date)
     ORDER BY date LIMIT $5`,
    [userId, range.from ?? null, range.to ?? null, range.after ?? null, range.limit + 1],
  );
  return { rows: rows.slice(0, range.limit), hasMore: rows.length > range.limit };
}

/** Deletes the user's days from `from` to `to`, both included; returns how many there were. */
export async function deleteDailyRange(pool: Pool, userId: string, range: Required<DayRange>): Promise<number> {
  const { rowCount } = await pool.query(
    'DELETE FROM daily_summaries WHERE user_id = $1 AND date >= $2::date AND date <= $3::date',
    [userId, range.from, range.to],
  );
  return rowCount ?? 0;
}
