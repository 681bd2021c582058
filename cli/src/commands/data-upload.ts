import fs from 'node:fs';
import path from 'node:path';
import {
  AmyError,
  APIError,
  PayloadTooLargeError,
  type Amy,
  type DailySummaryInput,
  type LabResultInput,
  type UpsertResult,
  type WorkoutInput,
} from '@amy/sdk';
import { MAX_DATA_ROWS_PER_REQUEST } from '../../../contracts/data';
import { parseCommandLine } from '../args';
import type { Command, CommandContext } from '../context';
import { describeError, EXIT, exitCodeFor, UsageError } from '../errors';
import { terminalJson, terminalLine } from '../terminal-text';
import { parseRowsFile, type DataTable } from '../data/rows-file';
import { batchesOf, locateRefusal, type Batch } from '../data/upload';
import { Progress } from '../data/progress';
import { parseCount, parseTable } from '../data/options';

export const dataUpload: Command = {
  name: 'data upload',
  summary: 'send daily summaries, workouts or lab results from a JSON lines (or JSON array) file',
  help: `Usage: amy data upload daily|workouts|labs <file> [--batch-size N] [--start-line N] [--json]

Sends the rows of <file> (- reads stdin): one JSON object per line with the API's field names
(what \`amy data export\` writes), or one JSON array of them. Daily rows are upserted by date,
workouts by external_id, lab results ({ date, biomarker, value, unit }) by biomarker and day, so
sending a file again is safe: it replaces those rows with themselves.

The whole file is read first: a line that is not a JSON object, or a row the file holds twice (the
same date, external_id, or biomarker on a day), stops the upload before anything is sent. The rows then go in requests of up to
${MAX_DATA_ROWS_PER_REQUEST} (the API's maximum). A request is stored whole or not at all: if the API refuses a row,
amy names its line and the field, says how many rows were stored before, and prints the command
that resumes from the first line of the refused request. Exit 2 for a refused row. Ctrl-C stops
it (exit 130) with the same account: what was stored, and the command that resumes.

Options
  --batch-size N  rows per request, 1–${MAX_DATA_ROWS_PER_REQUEST} (default ${MAX_DATA_ROWS_PER_REQUEST})
  --start-line N  skip the rows before line N (resume where an upload stopped)
  --json          one JSON object per request sent ({ lines, rows, inserted, updated }), then one
                  with the totals ({ done, rows, inserted, updated }) or the failure ({ error,
                  line, lines, stored_rows, resume_line })`,

  async run(args, ctx) {
    const { values, positionals } = parseCommandLine(
      'data upload',
      args,
      { 'batch-size': { type: 'string' }, 'start-line': { type: 'string' }, json: { type: 'boolean' } },
      { names: ['table', 'file'] },
    );
    const table = parseTable(positionals[0], 'data upload');
    const file = positionals[1];
    const batchSize =
      parseCount(values['batch-size'], '--batch-size', 'data upload', MAX_DATA_ROWS_PER_REQUEST) ??
      MAX_DATA_ROWS_PER_REQUEST;
    const startLine = parseCount(values['start-line'], '--start-line', 'data upload') ?? 1;
    const name = file === '-' ? 'stdin' : file;
    const rows = parseRowsFile(await readInput(file, ctx), table, name).filter((r) => r.line >= startLine);
    if (rows.length === 0) {
      if (values.json) ctx.stdout.write(`${JSON.stringify({ done: true, rows: 0, inserted: 0, updated: 0 })}\n`);
      else
        ctx.stderr.write(`${name} holds no rows${startLine > 1 ? ` from line ${startLine}` : ''}; nothing was sent.\n`);
      return 0;
    }

    const amy = ctx.amy(); // a missing key is a configuration error before anything is sent
    const batches = batchesOf(rows, batchSize);
    const progress = new Progress(ctx.stderr);
    const totals = { rows: 0, inserted: 0, updated: 0 };
    const upload = (batch: Batch): FailedUpload => ({
      table,
      file,
      name,
      batch,
      stored: totals.rows,
      batchSize,
      json: values.json,
    });
    let inFlight = batches[0];
    // Ctrl-C: the request in flight may or may not be stored; say where to resume, as for a failure.
    const onInterrupt = () => {
      progress.clear();
      ctx.stderr.write('Interrupted.\n');
      tellWhereItStopped(ctx, upload(inFlight), false, null);
      ctx.exit(EXIT.interrupted);
    };
    ctx.signals.on('SIGINT', onInterrupt);
    try {
      for (const batch of batches) {
        inFlight = batch;
        progress.show(`Uploading ${name}: ${totals.rows}/${rows.length} rows`);
        let result: UpsertResult;
        try {
          result = await send(amy, table, batch);
        } catch (err) {
          progress.clear();
          return reportFailure(ctx, err, upload(batch));
        }
        totals.rows += batch.rows.length;
        totals.inserted += result.inserted;
        totals.updated += result.updated;
        if (values.json) {
          const lines = [batch.firstLine, batch.lastLine];
          ctx.stdout.write(`${terminalJson({ lines, rows: batch.rows.length, ...result })}\n`);
        }
      }
    } finally {
      ctx.signals.off('SIGINT', onInterrupt);
    }
    progress.clear();
    if (values.json) ctx.stdout.write(`${terminalJson({ done: true, ...totals })}\n`);
    else {
      const requests = `${batches.length} request${batches.length === 1 ? '' : 's'}`;
      ctx.stdout.write(
        `Uploaded ${rowsText(totals.rows, table)} from ${name} in ${requests}: ` +
          `${totals.inserted} new, ${totals.updated} replaced.\n`,
      );
    }
    return 0;
  },
};

function send(amy: Amy, table: DataTable, batch: Batch): Promise<UpsertResult> {
  // The rows go as the file has them: what they may hold is the API's to judge.
  const rows = batch.rows.map((r) => r.row);
  if (table === 'daily') return amy.data.daily.upsert(rows as DailySummaryInput[]);
  if (table === 'workouts') return amy.data.workouts.upsert(rows as WorkoutInput[]);
  return amy.data.labs.upsert(rows as LabResultInput[]);
}

async function readInput(file: string, ctx: CommandContext): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await fs.promises.readFile(path.resolve(ctx.cwd, file), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (code ?? String(err));
    throw new UsageError(`Cannot read ${file}: ${why}.`);
  }
}

interface FailedUpload {
  table: DataTable;
  file: string;
  name: string;
  batch: Batch;
  /** Rows stored by the requests before this one. */
  stored: number;
  batchSize: number;
  json: boolean | undefined;
}

/**
 * Says which line was refused and why, what was stored before, and how to resume: from the first line
 * of the failed request, since nothing of it was stored (or, when no answer came, it may have been, and
 * sending it again is harmless: rows are upserted).
 */
function reportFailure(ctx: CommandContext, err: unknown, up: FailedUpload): number {
  const { batch } = up;
  const refusal = locateRefusal(err, batch);
  const span =
    batch.firstLine === batch.lastLine ? `line ${batch.firstLine}` : `lines ${batch.firstLine}–${batch.lastLine}`;
  // An answer of the API (any status) means the request was judged whole; no answer leaves it open.
  const answered = err instanceof APIError;

  if (refusal && err instanceof APIError) {
    const request = err.requestId ? `, request ${err.requestId}` : '';
    // The detail is the API's message, which may quote the row it refused.
    const refused =
      `${up.name} line ${refusal.line} was refused: ${refusal.detail} ` +
      `(${err.field} of the request for ${span}; ${err.code}${request})`;
    ctx.stderr.write(`error: ${terminalLine(refused)}\n`);
  } else {
    const smaller = err instanceof PayloadTooLargeError ? ' A smaller --batch-size sends less at once.' : '';
    ctx.stderr.write(`error: ${describeError(err)}${smaller}\n`);
  }
  tellWhereItStopped(ctx, up, answered, refusal?.line ?? null);
  if (up.json) {
    const error =
      err instanceof APIError
        ? { code: err.code, message: err.message, field: err.field, request_id: err.requestId }
        : { code: err instanceof AmyError ? err.code : 'error', message: describeError(err) };
    const failure = { error, line: refusal?.line ?? null, lines: [batch.firstLine, batch.lastLine] };
    ctx.stdout.write(`${terminalJson({ ...failure, stored_rows: up.stored, resume_line: batch.firstLine })}\n`);
  }
  return exitCodeFor(err);
}

/**
 * What was stored before the request that failed (or was cut off), what became of that request, and the
 * command that resumes from its first line.
 */
function tellWhereItStopped(ctx: CommandContext, up: FailedUpload, answered: boolean, refusedLine: number | null) {
  const { batch } = up;
  const span =
    batch.firstLine === batch.lastLine ? `line ${batch.firstLine}` : `lines ${batch.firstLine}–${batch.lastLine}`;
  const before =
    up.stored === 0 ? 'Nothing was stored before this' : `Stored ${rowsText(up.stored, up.table)} before this`;
  if (!answered) {
    ctx.stderr.write(`${before}; ${span} may or may not have been (sending them again is safe: rows are upserted).\n`);
  } else if (up.stored === 0) ctx.stderr.write('Nothing was stored.\n');
  else ctx.stderr.write(`${before}; nothing of ${span} was stored (a request is stored whole or not at all).\n`);
  const resume = resumeCommand(up);
  ctx.stderr.write(refusedLine ? `Fix line ${refusedLine}, then resume with: ${resume}\n` : `Resume with: ${resume}\n`);
}

function resumeCommand({ table, file, batch, batchSize }: FailedUpload): string {
  const size = batchSize === MAX_DATA_ROWS_PER_REQUEST ? '' : ` --batch-size ${batchSize}`;
  const start = batch.firstLine > 1 ? ` --start-line ${batch.firstLine}` : '';
  return `amy data upload ${table} ${shellWord(file)}${size}${start}`;
}

const shellWord = (word: string) => (/^[\w./@:+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

function rowsText(count: number, table: DataTable): string {
  const plural = count === 1 ? '' : 's';
  if (table === 'daily') return `${count} daily row${plural}`;
  if (table === 'workouts') return `${count} workout${plural}`;
  return `${count} lab result${plural}`;
}
