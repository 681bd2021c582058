/**
 * A user's lab results (`lab_biomarkers`) as the API writes and reads them: the upsert by biomarker and
 * day (the same biomarker on the same day replaces the value stored), pages oldest first, and deletion of
 * a range of days. Rows reach here validated and in their biomarkers' canonical units (./validate.ts,
 * ./labs). Days cross the SQL boundary as `YYYY-MM-DD` text both ways, as in ./store.ts.
 */
import type { Pool } from 'pg';
import { newId } from '../ids';
import type { DayRange } from './daily-summaries';
import { LAB_BIOMARKER_NAMES, type LabBiomarker, type LabRow } from './labs';

/**
 * Upserts by (user, biomarker, day) in one statement: the whole request is stored, or none of it. A value
 * that replaces another keeps the row's id.
 */
export async function upsertLabResults(
  pool: Pick<Pool, 'query'>,
  userId: string,
  rows: readonly LabRow[],
): Promise<{ inserted: number; updated: number }> {
  if (rows.length === 0) return { inserted: 0, updated: 0 };
  // xmax is 0 on a freshly inserted row version and set on one rewritten by ON CONFLICT DO UPDATE.
  const written = await pool.query<{ inserted: boolean }>(
    `INSERT INTO lab_biomarkers (id, user_id, taken_on, name, value, unit)
     SELECT l.id, $1, l.date, l.biomarker, l.value, l.unit
     FROM jsonb_to_recordset($2::jsonb) AS l (id text, date date, biomarker text, value float8, unit text)
     ON CONFLICT (user_id, name, taken_on) DO UPDATE SET value = EXCLUDED.value, unit = EXCLUDED.unit
     RETURNING (xmax = 0) AS inserted`,
    [
      userId,
      JSON.stringify(
        rows.map((row) => ({
          id: newId('labResult'),
          date: row.date,
          biomarker: row.biomarker,
          value: row.value,
          unit: row.unit,
        })),
      ),
    ],
  );
  const inserted = written.rows.filter((row) => row.inserted).length;
  return { inserted, updated: written.rows.length - inserted };
}

/** Where a page of lab results ends: the last one's day and biomarker (the order is day, then biomarker). */
export interface LabResultPosition {
  date: string;
  biomarker: string;
}

/** Which lab results: optionally of one biomarker, within days. */
type LabResultFilter = DayRange & { biomarker?: LabBiomarker };

/**
 * One page of the user's lab results, oldest first, after `after`; optionally of one biomarker and within
 * days. Only the biomarkers the service knows are listed (every writer stores only those).
 */
export async function listLabResultsPage(
  pool: Pool,
  userId: string,
  query: LabResultFilter & { after?: LabResultPosition; limit: number },
): Promise<{ rows: LabRow[]; hasMore: boolean }> {
  const { rows } = await pool.query<LabRow>(
    `SELECT to_char(taken_on, 'YYYY-MM-DD') AS date, name AS biomarker, value, unit
     FROM lab_biomarkers
     WHERE user_id = $1 AND name = ANY($2::text[]) AND ($3::date IS NULL OR taken_on >= $3::date)
       AND ($4::date IS NULL OR taken_on <= $4::date)
       AND ($5::date IS NULL OR (taken_on, name) > ($5::date, $6::text))
     ORDER BY taken_on, name LIMIT $7`,
    [
      userId,
      query.biomarker ? [query.biomarker] : LAB_BIOMARKER_NAMES,
      query.from ?? null,
      query.to ?? null,
      query.after?.date ?? null,
      query.after?.biomarker ?? null,
      query.limit + 1,
    ],
  );
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}

/** Deletes the user's lab results from `from` to `to`, both included, of one biomarker or all; returns how many. */
export async function deleteLabResults(
  pool: Pool,
  userId: string,
  filter: Required<DayRange> & { biomarker?: LabBiomarker },
): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM lab_biomarkers
     WHERE user_id = $1 AND taken_on >= $2::date AND taken_on <= $3::date AND ($4::text IS NULL OR name = $4)`,
    [userId, filter.from, filter.to, filter.biomarker ?? null],
  );
  return rowCount ?? 0;
}
