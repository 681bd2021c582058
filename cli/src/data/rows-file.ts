/**
 * The files `amy data upload` reads and `amy data export` writes: JSON lines (one row per line, blank
 * lines skipped) or one JSON array of rows. Every row keeps the line it starts on, so a refusal of the
 * API (`rows[3].steps` of one request) can be told as a line of the file. Reading checks only what the
 * API cannot say in terms of the file: JSON syntax, that each row is an object, and a row the file
 * holds twice (the same day, external_id, or biomarker on a day: two requests would store the later
 * one silently, where one request is refused). What a value may be is the API's to judge.
 */
import { UsageError } from '../errors';

export type DataTable = 'daily' | 'workouts' | 'labs';

/** One row of a file and the line (1-based) it starts on. */
export interface FileRow {
  line: number;
  row: Record<string, unknown>;
}

/** The fields each table's rows are upserted by: a file may hold each combination once. */
const KEY_FIELDS: Record<DataTable, string[]> = {
  daily: ['date'],
  workouts: ['external_id'],
  labs: ['date', 'biomarker'],
};

/** Reads a file's text into rows; `name` is how messages call the file. A `UsageError` names the line. */
export function parseRowsFile(text: string, table: DataTable, name: string): FileRow[] {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const rows = body.trimStart().startsWith('[') ? parseArray(body, name) : parseLines(body, name);
  rejectRepeats(rows, table, name);
  return rows;
}

function parseLines(text: string, name: string): FileRow[] {
  const rows: FileRow[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new UsageError(
        `${name} line ${line} is not valid JSON: each line holds one row as a JSON object (or the file is one JSON array).`,
      );
    }
    rows.push({ line, row: asRow(value, line, name) });
  });
  return rows;
}

function parseArray(text: string, name: string): FileRow[] {
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (err) {
    // V8 says where: `… in JSON at position 1234`; the line is what an editor finds.
    const position = /at position (\d+)/.exec((err as Error).message)?.[1];
    const where = position === undefined ? '' : ` (line ${lineAt(text, Number(position))})`;
    throw new UsageError(
      `${name} starts with [ but is not valid JSON${where}: a file is one JSON array, or one row per line.`,
    );
  }
  if (!Array.isArray(values)) throw new UsageError(`${name} is not a JSON array of rows.`);
  const lines = arrayElementLines(text);
  return values.map((value, i) => ({ line: lines[i], row: asRow(value, lines[i], name) }));
}

const lineAt = (text: string, position: number) => text.slice(0, position).split('\n').length;

function asRow(value: unknown, line: number, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${name} line ${line} is not a row: each row is a JSON object with the API's field names.`);
  }
  return value as Record<string, unknown>;
}

/**
 * The line each element of a top-level JSON array starts on. `text` is valid JSON (already parsed), so
 * tracking strings (where brackets and commas do not count) and nesting depth is enough.
 */
export function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectElement = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '\n') line++;
    if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') continue; // JSON's whitespace
    if (depth === 1 && expectElement && ch !== ']') {
      lines.push(line);
      expectElement = false;
    }
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 1) expectElement = true;
  }
  return lines;
}

function rejectRepeats(rows: FileRow[], table: DataTable, name: string): void {
  const fields = KEY_FIELDS[table];
  const what = fields.join(' and ');
  const firstLine = new Map<string, number>();
  for (const { line, row } of rows) {
    const values = fields.map((field) => row[field]);
    if (!values.every((value) => typeof value === 'string')) continue;
    const key = JSON.stringify(values);
    const earlier = firstLine.get(key);
    if (earlier !== undefined) {
      throw new UsageError(
        `${name} line ${line} repeats the ${what} of line ${earlier}: a file holds each ${what} once. Nothing was sent.`,
      );
    }
    firstLine.set(key, line);
  }
}
