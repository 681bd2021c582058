/**
 * `amy data upload`'s requests: a file's rows in batches, each one request that the API stores whole or
 * not at all. When one is refused, what matters to the user is the file: which line was refused (the
 * API names `rows[3].steps` of that request), what was stored before it, and the line to resume from.
 */
import { APIError } from '@amy/sdk';
import type { FileRow } from './rows-file';

/** Consecutive rows of the file sent in one request. */
export interface Batch {
  rows: FileRow[];
  firstLine: number;
  lastLine: number;
}

export function batchesOf(rows: FileRow[], size: number): Batch[] {
  const batches: Batch[] = [];
  for (let start = 0; start < rows.length; start += size) {
    const slice = rows.slice(start, start + size);
    batches.push({ rows: slice, firstLine: slice[0].line, lastLine: slice[slice.length - 1].line });
  }
  return batches;
}

/** A refusal told in terms of the file: the line, and the API's message with the row's field. */
export interface Refusal {
  line: number;
  /** The field within the row (`steps`), or null when the whole row was refused. */
  field: string | null;
  /** The API's message, its `rows[3].` prefix taken off since the line says which row it was. */
  detail: string;
}

/** Where in the file a refusal of `batch` points, when the API named one of its rows (`rows[3].steps`). */
export function locateRefusal(err: unknown, batch: Batch): Refusal | null {
  if (!(err instanceof APIError) || err.field === undefined) return null;
  const match = /^rows\[(\d+)\](?:\.(.+))?$/.exec(err.field);
  const row = match ? batch.rows[Number(match[1])] : undefined;
  if (!match || !row) return null;
  const field = match[2] ?? null;
  const detail = err.message.startsWith(`${err.field}: `)
    ? `${field ?? 'the row'}: ${err.message.slice(err.field.length + 2)}`
    : err.message;
  return { line: row.line, field, detail };
}
