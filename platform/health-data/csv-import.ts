/**
 * A user's own daily-summary CSV. Validation (the API's own, ./validate.ts, with each cell's text quoted
 * for the file's user) reports every problem with its file line (header = line 1) so the user can fix
 * the file in one pass; the import is all or nothing, so a half-imported file never
 * becomes the data the pipeline reasons about.
 */
import type { Pool } from 'pg';
import { upsertDailyRows } from './daily-summaries';
import {
  DAILY_METRICS,
  DAILY_SUMMARY_COLUMNS,
  METRIC_SPECS,
  type DailyMetric,
  type DailyRow,
} from '../../contracts/health-records';
import { dateProblem, firstPositions, numberProblem, sleepStagesOverrun, utcToday } from './validate';

export const MAX_CSV_BYTES = 5 * 1024 * 1024;
export const MAX_CSV_ROWS = 20_000;
const MAX_REPORTED_ERRORS = 100;

export interface CsvError {
  line: number;
  message: string;
}

export type DailySummaryCsv = { rows: DailyRow[] } | { errors: CsvError[] };

export class DailySummaryCsvError extends Error {
  override name = 'DailySummaryCsvError';
  constructor(readonly errors: CsvError[]) {
    super(`the daily summary CSV has ${errors.length} problem(s); nothing was imported`);
  }
}

interface CsvRecord {
  /** File line the record starts on; a quoted field may span lines. */
  line: number;
  fields: string[];
}

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks. Blank lines are skipped. */
function readCsvRecords(text: string): { records: CsvRecord[]; error?: CsvError } {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let quoteOpenedOn = 0;

  const endRecord = () => {
    fields.push(field);
    if (fields.length > 1 || fields[0].trim() !== '') records.push({ line: recordLine, fields });
    fields = [];
    field = '';
  };

  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        if (char === '\n') line++;
        field += char;
      }
    } else if (char === '"' && field.trim() === '') {
      quoted = true;
      quoteOpenedOn = line;
      field = '';
    } else if (char === ',') {
      fields.push(field);
      field = '';
    } else if (char === '\n') {
      endRecord();
      line++;
      recordLine = line;
    } else {
      field += char;
    }
  }
  if (quoted) return { records, error: { line: quoteOpenedOn, message: 'a quoted field is never closed' } };
  endRecord();
  return { records };
}

function checkHeader(header: CsvRecord): CsvError[] {
  const names = header.fields.map((name) => name.trim());
  const expected = new Set<string>(DAILY_SUMMARY_COLUMNS);
  const unknown = names.filter((name) => !expected.has(name));
  const missing = DAILY_SUMMARY_COLUMNS.filter((name) => !names.includes(name));
  const duplicated = [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
  const problems: string[] = [];
  if (unknown.length) problems.push(`unknown column(s): ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
  if (missing.length) problems.push(`missing column(s): ${missing.join(', ')}`);
  if (duplicated.length) problems.push(`duplicate column(s): ${duplicated.join(', ')}`);
  return problems.map((problem) => ({
    line: header.line,
    message: `${problem}; the header must name exactly these columns, in any order: ${DAILY_SUMMARY_COLUMNS.join(', ')}`,
  }));
}

const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** The cell's value, or a message saying why it is not acceptable. */
function parseMetric(metric: DailyMetric, cell: string): { value: number | null } | { problem: string } {
  if (cell === '') return { value: null };
  const value = Number(cell);
  if (!DECIMAL.test(cell) || !Number.isFinite(value)) {
    return { problem: `${metric}: ${JSON.stringify(cell)} is not a number` };
  }
  const problem = numberProblem(METRIC_SPECS[metric], value);
  return problem ? { problem: `${metric}: ${cell} ${problem}` } : { value };
}

function parseRow(record: CsvRecord, columns: string[], today: string): { row: DailyRow; problems: string[] } {
  const cells = new Map(columns.map((column, i) => [column, record.fields[i].trim()]));
  const problems: string[] = [];
  const date = cells.get('date')!;
  const badDate = date === '' ? null : dateProblem(date, today);
  if (date === '') problems.push('date is missing');
  else if (badDate) problems.push(`date ${JSON.stringify(date)} ${badDate}`);

  const row = { date } as DailyRow;
  for (const metric of DAILY_METRICS) {
    const parsed = parseMetric(metric, cells.get(metric)!);
    if ('problem' in parsed) problems.push(parsed.problem);
    row[metric] = 'value' in parsed ? parsed.value : null;
  }

  const stages = sleepStagesOverrun(row);
  if (stages !== null) {
    problems.push(`sleep stages add up to ${stages} minutes, more than sleep_minutes (${row.sleep_minutes})`);
  }
  return { row, problems };
}

function capErrors(errors: CsvError[]): CsvError[] {
  if (errors.length <= MAX_REPORTED_ERRORS) return errors;
  const rest = errors.length - MAX_REPORTED_ERRORS;
  return [
    ...errors.slice(0, MAX_REPORTED_ERRORS),
    { line: errors[MAX_REPORTED_ERRORS].line, message: `…and ${rest} more error(s) from this line on` },
  ];
}

/** The file's rows, or every problem in it; `today` (UTC) is the last day a row may be for. */
export function parseDailySummaryCsv(text: string, today: string = utcToday()): DailySummaryCsv {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CSV_BYTES) {
    return { errors: [{ line: 1, message: `the file is ${bytes} bytes; the limit is ${MAX_CSV_BYTES} (5 MB)` }] };
  }
  const { records, error } = readCsvRecords(text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n'));
  if (error) return { errors: [error] };
  const [header, ...data] = records;
  if (!header) return { errors: [{ line: 1, message: 'the file is empty; expected a header line' }] };
  const headerErrors = checkHeader(header);
  if (headerErrors.length) return { errors: headerErrors };
  if (data.length > MAX_CSV_ROWS) {
    const line = data[MAX_CSV_ROWS].line;
    return { errors: [{ line, message: `more than ${MAX_CSV_ROWS} rows; split the file and import the parts` }] };
  }

  const columns = header.fields.map((name) => name.trim());
  const errors: CsvError[] = [];
  const rows: DailyRow[] = [];
  const lineOfDate = firstPositions<number>();
  for (const record of data) {
    if (record.fields.length !== columns.length) {
      const message = `expected ${columns.length} values, found ${record.fields.length}`;
      errors.push({ line: record.line, message });
      continue;
    }
    const { row, problems } = parseRow(record, columns, today);
    const firstLine = dateProblem(row.date, today) ? undefined : lineOfDate(row.date, record.line);
    if (firstLine !== undefined) problems.push(`date ${row.date} also appears on line ${firstLine}`);
    errors.push(...problems.map((message) => ({ line: record.line, message })));
    rows.push(row);
  }
  return errors.length ? { errors: capErrors(errors) } : { rows };
}

/**
 * Imports the file for the user, or nothing at all (throws DailySummaryCsvError listing every problem).
 * Rows are upserted by (user, date): a re-import updates the days it repeats and keeps the others.
 */
export async function importDailySummary(
  pool: Pool,
  userId: string,
  text: string,
): Promise<{ inserted: number; updated: number }> {
  const parsed = parseDailySummaryCsv(text);
  if ('errors' in parsed) throw new DailySummaryCsvError(parsed.errors);
  return upsertDailyRows(pool, userId, parsed.rows);
}
