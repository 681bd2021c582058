/**
 * `amy data` without a service: the file reader (JSON lines and arrays, line numbers, what stops an
 * upload before anything is sent), batching and how a refusal maps back to a line, the command lines
 * each command refuses, and upload and export run against a fake API (the SDK's `fetch` option) that
 * answers as the real one does: requests in batches, a refused row in a later batch, every page read,
 * files refused before any request and written whole.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Amy, BadRequestError } from '@amy/sdk';
import { runAmy } from '../../cli/src/cli';
import type { CommandContext } from '../../cli/src/context';
import { arrayElementLines, parseRowsFile } from '../../cli/src/data/rows-file';
import { batchesOf, locateRefusal } from '../../cli/src/data/upload';

describe('the rows file', () => {
  test('JSON lines: one row per line, blank lines skipped, CRLF taken, each row with its line', () => {
    const text = '{"date":"2025-01-01","steps":1}\r\n\n  \n{"date":"2025-01-02","steps":2}\r\n';
    expect(parseRowsFile(text, 'daily', 'f')).toEqual([
      { line: 1, row: { date: '2025-01-01', steps: 1 } },
      { line: 4, row: { date: '2025-01-02', steps: 2 } },
    ]);
  });

  test('a JSON array, pretty-printed: each row with the line it starts on', () => {
    const text = `\uFEFF[
  {
    "external_id": "a, [b] {c}",
    "date": "2025-01-01"
  },
  { "external_id": "quote \\" ], {", "date": "2025-01-02" }, {"external_id": "x",
   "date": "2025-01-03"}
]`;
    const rows = parseRowsFile(text, 'workouts', 'f');
    expect(rows.map((r) => [r.line, r.row.external_id])).toEqual([
      [2, 'a, [b] {c}'],
      [6, 'quote " ], {'],
      [6, 'x'],
    ]);
  });

  test('element lines of arrays of anything, nested arrays included; an empty array has none', () => {
    expect(arrayElementLines('[1,\n"a\\\\",\n[2,\n3],\nnull]')).toEqual([1, 2, 3, 5]);
    expect(arrayElementLines('[\n]')).toEqual([]);
  });

  test('an empty file has no rows', () => {
    expect(parseRowsFile('', 'daily', 'f')).toEqual([]);
    expect(parseRowsFile('\n\n', 'daily', 'f')).toEqual([]);
    expect(parseRowsFile('[]', 'daily', 'f')).toEqual([]);
  });

  test.each([
    [
      'a line that is not JSON',
      '{"date":"2025-01-01"}\n{"date": 2025-01-02}\n',
      /^daily\.jsonl line 2 is not valid JSON/,
    ],
    ['a row that is not an object', '{"date":"2025-01-01"}\n\n[1,2]\n', /^daily\.jsonl line 3 is not a row/],
    [
      'an array that is not JSON',
      '[{"date":"2025-01-01"},\n{"date":"2025-01-02"}\n{"date":"2025-01-03"}]',
      /^daily\.jsonl starts with \[ but is not valid JSON \(line 3\)/,
    ],
    [
      'an array element that is not an object',
      '[\n{"date":"2025-01-01"},\n"x"\n]',
      /^daily\.jsonl line 3 is not a row/,
    ],
    [
      'a date the file holds twice',
      '{"date":"2025-01-01"}\n{"date":"2025-01-02"}\n{"date":"2025-01-01","steps":3}\n',
      /^daily\.jsonl line 3 repeats the date of line 1: .* Nothing was sent\.$/,
    ],
  ])('%s stops the upload, naming the line', (_what, text, message) => {
    expect(() => parseRowsFile(text, 'daily', 'daily.jsonl')).toThrow(message);
  });

  test('a biomarker the file holds twice on one day; on two days, or two on one day, is fine', () => {
    const rows = [
      { date: '2025-01-01', biomarker: 'tsh', value: 2, unit: 'mIU/L' },
      { date: '2025-01-01', biomarker: 'hba1c', value: 5.4, unit: '%' },
      { date: '2025-01-02', biomarker: 'tsh', value: 2.1, unit: 'mIU/L' },
    ].map((row) => JSON.stringify(row));
    expect(parseRowsFile(rows.join('\n'), 'labs', 'l')).toHaveLength(3);
    expect(() => parseRowsFile([...rows, rows[1]].join('\n'), 'labs', 'l')).toThrow(
      /^l line 4 repeats the date and biomarker of line 2/,
    );
  });

  test('a workout id the file holds twice; the same date twice is fine for workouts', () => {
    const twoOnADay = '{"external_id":"a","date":"2025-01-01"}\n{"external_id":"b","date":"2025-01-01"}\n';
    expect(parseRowsFile(twoOnADay, 'workouts', 'w')).toHaveLength(2);
    expect(() => parseRowsFile(`${twoOnADay}{"external_id":"a"}\n`, 'workouts', 'w')).toThrow(
      /^w line 3 repeats the external_id of line 1/,
    );
  });
});

describe('batches and refusals', () => {
  const rows = [3, 4, 7, 8, 9].map((line) => ({ line, row: { date: `d${line}` } }));

  test('batches keep the file order, the last one shorter', () => {
    expect(batchesOf(rows, 2).map((b) => [b.firstLine, b.lastLine, b.rows.length])).toEqual([
      [3, 4, 2],
      [7, 8, 2],
      [9, 9, 1],
    ]);
  });

  const refused = (field: string, message: string) =>
    new BadRequestError(400, { code: 'invalid_field', message, field, request_id: 'req_1' }, new Headers());

  test("the API's rows[i].field becomes the file's line, the message without the rows[i]. prefix", () => {
    const [, second] = batchesOf(rows, 2);
    expect(
      locateRefusal(refused('rows[1].steps', 'rows[1].steps: is outside the accepted range 0–60000.'), second),
    ).toEqual({ line: 8, field: 'steps', detail: 'steps: is outside the accepted range 0–60000.' });
    expect(locateRefusal(refused('rows[0].calories', 'Unknown field: rows[0].calories.'), second)).toEqual({
      line: 7,
      field: 'calories',
      detail: 'Unknown field: rows[0].calories.',
    });
  });

  test('a refusal that names no row of the batch is not located', () => {
    const [first] = batchesOf(rows, 2);
    expect(locateRefusal(refused('rows', 'rows: must hold at most 500 rows.'), first)).toBeNull();
    expect(locateRefusal(refused('rows[5].steps', 'rows[5].steps: bad.'), first)).toBeNull();
    expect(locateRefusal(new Error('boom'), first)).toBeNull();
  });
});

/** A fake API: answers each request with `answer`, records what was asked. */
function fakeApi(answer: (method: string, url: URL, body: unknown) => { status: number; body?: unknown }) {
  const requests: Array<{ method: string; url: URL; body: unknown }> = [];
  const fetch = async (input: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const url = new URL(input);
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    requests.push({ method, url, body });
    const { status, body: out } = answer(method, url, body);
    return new Response(out === undefined ? null : JSON.stringify(out), {
      status,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req_fake' },
    });
  };
  return { requests, amy: new Amy({ apiKey: 'amy_test', baseUrl: 'http://api.test', fetch, maxRetries: 0 }) };
}

/**
 * Starts `amy` in this process on a fake API; stdout and stderr are collected, neither a terminal.
 * `ctrlC()` sends the SIGINT its commands listen for; `exited` is the code they end the process with.
 */
function startAmyOn(amy: Amy | null, argv: string[], cwd = os.tmpdir(), stdin: NodeJS.ReadableStream = process.stdin) {
  const out = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') =>
    ({ isTTY: false, write: (text: string) => ((out[name] += text), true) }) as unknown as NodeJS.WriteStream;
  const listeners = new Set<() => void>();
  let exit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (exit = resolve));
  const ctx: CommandContext = {
    env: {},
    cwd,
    stdout: stream('stdout'),
    stderr: stream('stderr'),
    stdin: stdin as NodeJS.ReadStream,
    signals: {
      on: (_signal, listener) => listeners.add(listener),
      off: (_signal, listener) => listeners.delete(listener),
    },
    exit,
    amy: () => {
      if (!amy) throw new Error('this command line must be refused before any request');
      return amy;
    },
    config: () => null,
  };
  return { out, exited, done: runAmy(argv, ctx), ctrlC: () => listeners.forEach((listener) => listener()) };
}

/** Runs `amy` to its end (see startAmyOn). */
async function amyOn(amy: Amy | null, argv: string[], cwd = os.tmpdir()) {
  const run = startAmyOn(amy, argv, cwd);
  const code = await run.done;
  return { code, ...run.out };
}

/**
 * A response that never comes: the process ends (a Ctrl-C) while the request is in flight. Here the
 * process is jest's and goes on, so each such request is dropped once its test is over, as a real exit
 * drops it; left pending, it would hold the SDK's request timeout, and jest with it, for a minute.
 */
const unanswered = new Set<(reason: Error) => void>();
const never = () => new Promise<never>((_resolve, reject) => unanswered.add(reject));
afterEach(() => {
  for (const drop of unanswered) drop(new Error('the process has ended'));
  unanswered.clear();
});

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'amy-cli-data-'));

describe('command lines refused before any request (exit 2, pointing at --help)', () => {
  test.each([
    [['data', 'upload', 'daily'], /^error: Missing <file>\. Run `amy data upload --help`/],
    [['data', 'upload', 'monthly', 'f.jsonl'], /^error: Unknown table "monthly": use daily, workouts or labs/],
    [['data', 'upload', 'daily', 'f', '--batch-size', '501'], /--batch-size takes a whole number from 1 to 500/],
    [['data', 'upload', 'daily', 'f', '--start-line', '0'], /--start-line takes a whole number from 1/],
    [['data', 'upload', 'daily', 'no-such-file.jsonl'], /^error: Cannot read no-such-file\.jsonl: no such file\./],
    [['data', 'list'], /^error: Missing <table>/],
    [['data', 'list', 'daily', '--type', 'running'], /--type is for workouts only/],
    [['data', 'list', 'workouts', '--type', 'curling'], /Unknown workout type "curling": use one of running, /],
    [['data', 'list', 'daily', '--limit', '0'], /--limit takes a whole number from 1/],
    [['data', 'list', 'labs', '--type', 'running'], /--type is for workouts only/],
    [['data', 'list', 'workouts', '--biomarker', 'hba1c'], /--biomarker is for labs only/],
    [['data', 'delete', 'labs', '--to', '2025-01-01'], /amy data delete labs needs both --from and --to/],
    [['data', 'delete', 'daily', '--from', 'a', '--to', 'b', '--biomarker', 'tsh'], /--biomarker is for labs only/],
    [['data', 'list', 'daily', '--limit', '5', '--all'], /Give --limit or --all, not both/],
    [['data', 'list', 'daily', '--verbose'], /^error: Unknown option --verbose\. Run `amy data list --help`/],
    [['data', 'delete', 'daily', '--from', '2025-01-01'], /needs both --from and --to/],
    [['data', 'delete', 'workout'], /^error: Missing <external_id>/],
    [['data', 'delete', 'workout', 'w1', '--to', '2025-01-01'], /--from and --to are for daily rows/],
    [['data', 'delete', 'everything'], /takes daily, labs or workout, not "everything"/],
    [['data', 'profile', 'set'], /Give --file or at least one of --sex, --birth-year/],
    [['data', 'profile', 'set', '--height-cm', 'tall'], /--height-cm takes a number, not "tall"/],
    [['data', 'export'], /^error: Missing <dir>/],
    [['data', 'connections', 'garmin'], /^error: Unexpected argument/],
    [['data', 'connections', '--all'], /^error: Unknown option --all\. Run `amy data connections --help`/],
    [['data', 'frobnicate'], /^error: amy data takes one of: upload, list, delete, export, profile, connections\./],
  ])('%j', async (argv, message) => {
    const run = await amyOn(null, argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  test.each([
    'data upload',
    'data list',
    'data delete',
    'data export',
    'data profile',
    'data profile set',
    'data connections',
  ])('%s --help', async (command) => {
    const run = await amyOn(null, [...command.split(' '), '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: amy ${command}`));
  });

  test('profile set without a stored profile needs all four, and names the missing ones', async () => {
    const { amy } = fakeApi(() => ({ status: 404, body: { error: { code: 'not_found', message: 'No profile.' } } }));
    const run = await amyOn(amy, ['data', 'profile', 'set', '--sex', 'female', '--weight-kg', '60']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the first needs all four: missing --birth-year, --height-cm\./);
  });
});

describe('profile set', () => {
  const stored = { sex: 'female', birth_year: 1990, height_cm: 165, weight_kg: 58 };

  test('flags change the stored profile; the PUT holds all four', async () => {
    const { amy, requests } = fakeApi((method, _url, body) => ({
      status: 200,
      body: method === 'PUT' ? body : stored,
    }));
    const run = await amyOn(amy, ['data', 'profile', 'set', '--weight-kg', '57.5']);
    expect(run.code).toBe(0);
    expect(requests.map((r) => r.method)).toEqual(['GET', 'PUT']);
    expect(requests[1].body).toEqual({ ...stored, weight_kg: 57.5 });
    expect(run.stdout).toBe(
      'Profile written.\nsex         female\nbirth_year  1990\nheight_cm   165\nweight_kg   57.5\n',
    );
  });

  test('--file writes the profile an export holds, flags on top; a null profile.json is refused', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'profile.json'), JSON.stringify(stored, null, 2));
    const { amy, requests } = fakeApi((_method, _url, body) => ({ status: 200, body }));
    const run = await amyOn(amy, ['data', 'profile', 'set', '--file', 'profile.json', '--sex', 'male', '--json'], dir);
    expect(run.code).toBe(0);
    expect(requests.map((r) => [r.method, r.body])).toEqual([['PUT', { ...stored, sex: 'male' }]]);
    expect(JSON.parse(run.stdout)).toEqual({ ...stored, sex: 'male' });

    fs.writeFileSync(path.join(dir, 'none.json'), 'null\n');
    const refused = await amyOn(null, ['data', 'profile', 'set', '--file', 'none.json'], dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: none\.json holds null: no profile was exported/);
  });
});

describe('upload against a fake API', () => {
  const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ date: `2025-01-0${i + 1}`, steps: 1000 + i }));

  test('sends the rows in batches in file order; --json prints one line per request, then the totals', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'daily.jsonl'), `${lines.join('\n')}\n`);
    const { amy, requests } = fakeApi((_m, _u, body) => ({
      status: 200,
      body: { inserted: (body as { rows: unknown[] }).rows.length, updated: 0 },
    }));
    const run = await amyOn(amy, ['data', 'upload', 'daily', 'daily.jsonl', '--batch-size', '2', '--json'], dir);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(requests.map((r) => [r.method, r.url.pathname, (r.body as { rows: unknown[] }).rows.length])).toEqual([
      ['POST', '/v1/data/daily', 2],
      ['POST', '/v1/data/daily', 2],
      ['POST', '/v1/data/daily', 1],
    ]);
    expect(requests.flatMap((r) => (r.body as { rows: unknown[] }).rows)).toEqual(lines.map((l) => JSON.parse(l)));
    expect(
      run.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { lines: [1, 2], rows: 2, inserted: 2, updated: 0 },
      { lines: [3, 4], rows: 2, inserted: 2, updated: 0 },
      { lines: [5, 5], rows: 1, inserted: 1, updated: 0 },
      { done: true, rows: 5, inserted: 5, updated: 0 },
    ]);
  });

  test('a refused row: its line and field, what was stored, and the command that resumes (exit 2)', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'my days.jsonl'), `${lines.join('\n')}\n`);
    let call = 0;
    const { amy, requests } = fakeApi(() =>
      ++call === 2
        ? {
            status: 400,
            body: {
              error: {
                code: 'invalid_field',
                message: 'rows[1].steps: is outside the accepted range 0–60000.',
                field: 'rows[1].steps',
                request_id: 'req_42',
              },
            },
          }
        : { status: 200, body: { inserted: 2, updated: 0 } },
    );
    const run = await amyOn(amy, ['data', 'upload', 'daily', 'my days.jsonl', '--batch-size', '2'], dir);
    expect(run.code).toBe(2);
    expect(requests).toHaveLength(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'error: my days.jsonl line 4 was refused: steps: is outside the accepted range 0–60000. ' +
        '(rows[1].steps of the request for lines 3–4; invalid_field, request req_42)\n' +
        'Stored 2 daily rows before this; nothing of lines 3–4 was stored (a request is stored whole or not at all).\n' +
        "Fix line 4, then resume with: amy data upload daily 'my days.jsonl' --batch-size 2 --start-line 3\n",
    );

    // The resume command sends lines 3 to 5 alone.
    const resumed = fakeApi(() => ({ status: 200, body: { inserted: 1, updated: 0 } }));
    const again = await amyOn(resumed.amy, ['data', 'upload', 'daily', 'my days.jsonl', '--start-line', '3'], dir);
    expect(again.code).toBe(0);
    expect((resumed.requests[0].body as { rows: Array<{ date: string }> }).rows.map((r) => r.date)).toEqual([
      '2025-01-03',
      '2025-01-04',
      '2025-01-05',
    ]);
    expect(again.stdout).toBe('Uploaded 3 daily rows from my days.jsonl in 1 request: 1 new, 0 replaced.\n');
  });

  test('--json: the failure as the last line on stdout', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'w.json'), '[{"external_id":"a","date":"2025-01-01"}]');
    const { amy } = fakeApi(() => ({
      status: 400,
      body: {
        error: { code: 'invalid_field', message: 'Unknown field: rows[0].x.', field: 'rows[0].x', request_id: 'r' },
      },
    }));
    const run = await amyOn(amy, ['data', 'upload', 'workouts', 'w.json', '--json'], dir);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toEqual({
      error: { code: 'invalid_field', message: 'Unknown field: rows[0].x.', field: 'rows[0].x', request_id: 'r' },
      line: 1,
      lines: [1, 1],
      stored_rows: 0,
      resume_line: 1,
    });
    expect(run.stderr).toMatch(/^error: w\.json line 1 was refused: Unknown field: rows\[0\]\.x\. /);
    expect(run.stderr).toContain(
      '\nNothing was stored.\nFix line 1, then resume with: amy data upload workouts w.json\n',
    );
  });

  test('Ctrl-C while a request is in flight: exit 130, what was stored, and where to resume', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'daily.jsonl'), `${lines.join('\n')}\n`);
    let calls = 0;
    const press = { ctrlC: () => {} };
    const amy = new Amy({
      apiKey: 'amy_test',
      baseUrl: 'http://api.test',
      maxRetries: 0,
      fetch: async () => {
        if (++calls === 1) return Response.json({ inserted: 2, updated: 0 });
        press.ctrlC();
        return never();
      },
    });
    const run = startAmyOn(amy, ['data', 'upload', 'daily', 'daily.jsonl', '--batch-size', '2'], dir);
    press.ctrlC = run.ctrlC;
    expect(await run.exited).toBe(130);
    expect(run.out.stderr).toBe(
      'Interrupted.\n' +
        'Stored 2 daily rows before this; lines 3–4 may or may not have been (sending them again is safe: rows are upserted).\n' +
        'Resume with: amy data upload daily daily.jsonl --batch-size 2 --start-line 3\n',
    );
  });

  test('no answer (the API cannot be reached): exit 4, and the request may or may not have been stored', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'daily.jsonl'), `${lines.join('\n')}\n`);
    const amy = new Amy({
      apiKey: 'amy_test',
      baseUrl: 'http://api.test',
      maxRetries: 0,
      fetch: () =>
        Promise.reject(
          new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }),
        ),
    });
    const run = await amyOn(amy, ['data', 'upload', 'daily', 'daily.jsonl'], dir);
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(/^error: Could not reach http:\/\/api\.test\/v1\/data\/daily \(ECONNREFUSED\)\n/);
    expect(run.stderr).toContain(
      '\nNothing was stored before this; lines 1–5 may or may not have been (sending them again is safe: rows are upserted).\n' +
        'Resume with: amy data upload daily daily.jsonl\n',
    );
  });

  test('- reads the rows from stdin', async () => {
    const { amy, requests } = fakeApi(() => ({ status: 200, body: { inserted: 5, updated: 0 } }));
    const stdin = Readable.from([Buffer.from(`${lines.join('\n')}\n`)]);
    const run = startAmyOn(amy, ['data', 'upload', 'daily', '-'], os.tmpdir(), stdin);
    expect(await run.done).toBe(0);
    expect(requests.map((r) => (r.body as { rows: unknown[] }).rows.length)).toEqual([5]);
    expect(run.out.stdout).toBe('Uploaded 5 daily rows from stdin in 1 request: 5 new, 0 replaced.\n');
  });

  test('a file with no rows sends nothing', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'empty.jsonl'), '');
    const { amy, requests } = fakeApi(() => ({ status: 500 }));
    const run = await amyOn(amy, ['data', 'upload', 'workouts', 'empty.jsonl'], dir);
    expect(run).toMatchObject({ code: 0, stdout: '', stderr: 'empty.jsonl holds no rows; nothing was sent.\n' });
    expect(requests).toEqual([]);
  });
});

describe('export against a fake API', () => {
  const day = (n: number) => ({ date: `2025-01-${String(n).padStart(2, '0')}`, steps: n });

  /** Daily rows in pages of two; no workouts; a profile. */
  const lab = { date: '2025-01-02', biomarker: 'ldl_cholesterol', value: 129.9, unit: 'mg/dL', loinc: '13457-7' };

  function api() {
    return fakeApi((_method, url) => {
      if (url.pathname === '/v1/data/daily') {
        const at = Number(url.searchParams.get('cursor') ?? 0);
        const data = [day(1), day(2), day(3)].slice(at, at + 2);
        return { status: 200, body: { data, next_cursor: at + 2 < 3 ? String(at + 2) : null, has_more: at + 2 < 3 } };
      }
      if (url.pathname === '/v1/data/workouts')
        return { status: 200, body: { data: [], next_cursor: null, has_more: false } };
      if (url.pathname === '/v1/data/labs')
        return { status: 200, body: { data: [lab], next_cursor: null, has_more: false } };
      return { status: 200, body: { sex: 'male', birth_year: 1980, height_cm: 180, weight_kg: 80 } };
    });
  }

  test('every page into daily.jsonl, an empty workouts.jsonl, labs.jsonl, profile.json; owner-only; no temporary file left', async () => {
    const dir = path.join(tempDir(), 'export');
    const { amy, requests } = api();
    const run = await amyOn(amy, ['data', 'export', dir]);
    expect(run.code).toBe(0);
    expect(
      requests.filter((r) => r.url.pathname === '/v1/data/daily').map((r) => r.url.searchParams.get('limit')),
    ).toEqual(['1000', '1000']);
    expect(fs.readFileSync(path.join(dir, 'daily.jsonl'), 'utf8')).toBe(
      [day(1), day(2), day(3)].map((d) => `${JSON.stringify(d)}\n`).join(''),
    );
    expect(fs.readFileSync(path.join(dir, 'workouts.jsonl'), 'utf8')).toBe('');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'profile.json'), 'utf8'))).toEqual({
      sex: 'male',
      birth_year: 1980,
      height_cm: 180,
      weight_kg: 80,
    });
    // Lab results as an upload takes them: the LOINC code left out.
    expect(fs.readFileSync(path.join(dir, 'labs.jsonl'), 'utf8')).toBe(
      '{"date":"2025-01-02","biomarker":"ldl_cholesterol","value":129.9,"unit":"mg/dL"}\n',
    );
    expect(fs.readdirSync(dir).sort()).toEqual(['daily.jsonl', 'labs.jsonl', 'profile.json', 'workouts.jsonl']);
    expect(fs.statSync(path.join(dir, 'daily.jsonl')).mode & 0o777).toBe(0o600);
    expect(run.stdout).toMatch(/^Exported to .*:\n {2}daily\.jsonl +3 daily rows\n {2}workouts\.jsonl +0 workouts\n/);
  });

  test('existing files are refused before any request; --force replaces them', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'workouts.jsonl'), 'mine\n');
    const refused = await amyOn(null, ['data', 'export', dir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^error: workouts\.jsonl already exists in .*; nothing was written\. --force replaces it\./,
    );
    expect(fs.readdirSync(dir)).toEqual(['workouts.jsonl']);

    const forced = await amyOn(api().amy, ['data', 'export', dir, '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'workouts.jsonl'), 'utf8')).toBe('');
    expect(
      forced.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { file: path.join(dir, 'daily.jsonl'), rows: 3 },
      { file: path.join(dir, 'workouts.jsonl'), rows: 0 },
      { file: path.join(dir, 'labs.jsonl'), rows: 1 },
      { file: path.join(dir, 'profile.json'), profile: true },
    ]);
  });

  test('a failure midway leaves no file under the final names and no temporary file', async () => {
    const dir = tempDir();
    const { amy } = fakeApi((_m, url) =>
      url.searchParams.get('cursor')
        ? { status: 400, body: { error: { code: 'invalid_field', message: 'cursor: stale.', field: 'cursor' } } }
        : { status: 200, body: { data: [day(1)], next_cursor: 'c', has_more: true } },
    );
    const run = await amyOn(amy, ['data', 'export', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: cursor: stale\./);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('Ctrl-C midway: exit 130, the temporary files removed, the files already there untouched', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'profile.json'), 'the old one\n');
    const press = { ctrlC: () => {} };
    const amy = new Amy({
      apiKey: 'amy_test',
      baseUrl: 'http://api.test',
      maxRetries: 0,
      fetch: async (input) => {
        if (!new URL(input).searchParams.get('cursor')) {
          return Response.json({ data: [day(1)], next_cursor: 'c', has_more: true });
        }
        press.ctrlC();
        return never();
      },
    });
    const run = startAmyOn(amy, ['data', 'export', dir, '--force']);
    press.ctrlC = run.ctrlC;
    expect(await run.exited).toBe(130);
    expect(run.out.stderr).toBe('Interrupted; nothing was written.\n');
    expect(fs.readdirSync(dir)).toEqual(['profile.json']);
    expect(fs.readFileSync(path.join(dir, 'profile.json'), 'utf8')).toBe('the old one\n');
  });

  test('no profile: profile.json holds null', async () => {
    const dir = tempDir();
    const { amy } = fakeApi((_m, url) =>
      url.pathname === '/v1/data/profile'
        ? { status: 404, body: { error: { code: 'not_found', message: 'No profile.' } } }
        : { status: 200, body: { data: [], next_cursor: null, has_more: false } },
    );
    expect((await amyOn(amy, ['data', 'export', dir])).code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'profile.json'), 'utf8')).toBe('null\n');
  });
});

describe('connections', () => {
  const connection = (provider: string, status: string, connected_at: string | null) => ({
    terra_user_id: `terra_${provider.toLowerCase()}`,
    provider,
    status,
    scopes: [],
    connected_at,
    updated_at: '2026-11-23T10:05:59.123Z',
  });
  const rows = [
    connection('GARMIN', 'connected', '2026-11-20T08:00:00.000Z'),
    connection('OURA', 'reauth_required', '2026-10-01T23:59:00.000Z'),
    connection('WHOOP', 'error', null),
  ];

  test('a table, one line per connection, times in UTC to the minute; a hint when one needs reconnecting', async () => {
    const { amy, requests } = fakeApi(() => ({ status: 200, body: { data: rows } }));
    const run = await amyOn(amy, ['data', 'connections']);
    expect(run.code).toBe(0);
    expect(requests.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`)).toEqual(['GET /v1/data/connections']);
    expect(run.stdout.split('\n')).toEqual([
      'provider        status           connected (UTC)   updated (UTC)     terra_user_id',
      'GARMIN          connected        2026-11-20 08:00  2026-11-23 10:05  terra_garmin',
      'OURA            reauth_required  2026-10-01 23:59  2026-11-23 10:05  terra_oura',
      'WHOOP           error            -                 2026-11-23 10:05  terra_whoop',
      '',
    ]);
    expect(run.stderr).toMatch(/^No data comes from a connection in reauth_required, revoked or error: reconnect/);
  });

  test('all connected: no hint', async () => {
    const { amy } = fakeApi(() => ({ status: 200, body: { data: rows.slice(0, 1) } }));
    const run = await amyOn(amy, ['data', 'connections']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
  });

  test('--json: one connection per line, as the API returns it', async () => {
    const { amy } = fakeApi(() => ({ status: 200, body: { data: rows } }));
    const run = await amyOn(amy, ['data', 'connections', '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(
      run.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual(rows);
  });

  test('none: says how a provider is connected; --json prints nothing', async () => {
    const { amy } = fakeApi(() => ({ status: 200, body: { data: [] } }));
    const run = await amyOn(amy, ['data', 'connections']);
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toBe("No connections. A provider is connected through Terra's widget: see docs/terra.md.\n");
    expect(await amyOn(amy, ['data', 'connections', '--json'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
