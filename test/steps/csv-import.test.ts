import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DailySummaryCsvError,
  importDailySummary,
  MAX_CSV_ROWS,
  parseDailySummaryCsv,
  type CsvError,
} from '../../platform/health-data/csv-import';
import { DAILY_SUMMARY_COLUMNS, type DailyRow } from '../../contracts/health-records';
import { readUserHealthData } from '../../platform/health-data/store';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { createUserWithApiKey } from '../../platform/users';
import { CliError, resolveDatabaseUrl } from '../../scripts/cli-env';
import { runCli } from '../support/cli';
import { createTestDatabase, type TestDatabase } from '../support/database';

const HEADER = DAILY_SUMMARY_COLUMNS.join(',');
const GOOD_ROW = '2026-01-01,8000,420,80,95,210,35,60,48.5,70,25,82';

function toCsv(rows: DailyRow[]): string {
  const lines = rows.map((row) => DAILY_SUMMARY_COLUMNS.map((column) => row[column] ?? '').join(','));
  return [HEADER, ...lines].join('\n') + '\n';
}

/** A file of the header plus these data lines; line N of the file is lines[N - 2]. */
const csv = (...lines: string[]) => [HEADER, ...lines].join('\n') + '\n';

function errorsOf(text: string): CsvError[] {
  const parsed = parseDailySummaryCsv(text);
  if (!('errors' in parsed)) throw new Error('expected the file to be rejected');
  return parsed.errors;
}

function rowsOf(text: string): DailyRow[] {
  const parsed = parseDailySummaryCsv(text);
  if ('errors' in parsed) throw new Error(`expected the file to parse: ${JSON.stringify(parsed.errors)}`);
  return parsed.rows;
}

describe('parseDailySummaryCsv', () => {
  test('reads columns in any order, empty cells as null, CRLF, a BOM, quoted fields and trailing blank lines', () => {
    const columns = [...DAILY_SUMMARY_COLUMNS].reverse();
    const text =
      '\uFEFF' +
      [
        columns.join(','),
        '82,25,70,48.5,60,35,210,95,80,420,8000,2026-01-01',
        '"",,"71","",61,,,,,,"9000","2026-01-02"',
        '',
        '',
      ].join('\r\n');
    expect(rowsOf(text)).toEqual([
      {
        date: '2026-01-01',
        steps: 8000,
        sleep_minutes: 420,
        deep_sleep_minutes: 80,
        rem_sleep_minutes: 95,
        light_sleep_minutes: 210,
        awake_minutes: 35,
        resting_heart_rate: 60,
        heart_rate_variability: 48.5,
        stress_management_score: 70,
        active_zone_minutes: 25,
        sleep_score: 82,
      },
      {
        date: '2026-01-02',
        steps: 9000,
        sleep_minutes: null,
        deep_sleep_minutes: null,
        rem_sleep_minutes: null,
        light_sleep_minutes: null,
        awake_minutes: null,
        resting_heart_rate: 61,
        heart_rate_variability: null,
        stress_management_score: 71,
        active_zone_minutes: null,
        sleep_score: null,
      },
    ]);
  });

  test('names the extra and the missing columns', () => {
    const header = [...DAILY_SUMMARY_COLUMNS.filter((c) => c !== 'sleep_score' && c !== 'steps'), 'calories'];
    const errors = errorsOf([header.join(','), '2026-01-01,1,2,3,4,5,6,7,8,9,10'].join('\n'));
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e.line === 1)).toBe(true);
    expect(errors[0].message).toMatch(/unknown column\(s\): "calories"/);
    expect(errors[1].message).toMatch(/missing column\(s\): steps, sleep_score/);
    expect(errorsOf(`${HEADER},steps\n`)[0].message).toMatch(/duplicate column\(s\): steps/);
  });

  test.each([
    ['a malformed date', '2026/01/05,8000,,,,,,,,,,', /date "2026\/01\/05" is not a calendar date/],
    ['an impossible calendar date', '2026-02-30,8000,,,,,,,,,,', /date "2026-02-30" is not a calendar date/],
    ['a missing date', ',8000,,,,,,,,,,', /date is missing/],
    ['a day in the future', '2999-01-05,8000,,,,,,,,,,', /date "2999-01-05" is in the future/],
    ['text in a number column', '2026-01-05,lots,,,,,,,,,,', /steps: "lots" is not a number/],
    ['a fraction in an Int column', '2026-01-05,8000.5,,,,,,,,,,', /steps: 8000.5 must be a whole number/],
    [
      'a value out of range',
      '2026-01-05,8000,,,,,,250,,,,',
      /resting_heart_rate: 250 is outside the accepted range 30–120/,
    ],
    ['an infinite value', '2026-01-05,,,,,,,,1e999,,,', /heart_rate_variability: "1e999" is not a number/],
    ['a row with too few values', '2026-01-05,8000,420', /expected 12 values, found 3/],
    [
      'stages longer than the night',
      '2026-01-05,,400,100,100,200,10,,,,,',
      /sleep stages add up to 410 minutes, more than sleep_minutes \(400\)/,
    ],
  ])('reports %s with its line number', (_kind, badLine, message) => {
    const errors = errorsOf(csv(GOOD_ROW, '2026-01-02,8000,,,,,,,,,,', badLine, '2026-01-09,8000,,,,,,,,,,'));
    expect(errors).toEqual([{ line: 4, message: expect.stringMatching(message) }]);
  });

  test('accepts stages up to 5 minutes over the total (rounding on the device)', () => {
    expect(rowsOf(csv('2026-01-05,,400,100,100,195,10,,,,,'))).toHaveLength(1);
  });

  test('reports a duplicate date with both line numbers', () => {
    const errors = errorsOf(csv(GOOD_ROW, '2026-01-02,,,,,,,,,,,', GOOD_ROW));
    expect(errors).toEqual([{ line: 4, message: 'date 2026-01-01 also appears on line 2' }]);
  });

  test('collects every problem in the file, several per row', () => {
    const errors = errorsOf(csv('2026-13-01,x,,,,,,,,,,', GOOD_ROW, '2026-01-03,,,,,,,10,,101,,'));
    expect(errors.map((e) => e.line)).toEqual([2, 2, 4, 4]);
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^date "2026-13-01"/),
      expect.stringMatching(/^steps: "x"/),
      expect.stringMatching(/^resting_heart_rate: 10 /),
      expect.stringMatching(/^stress_management_score: 101 /),
    ]);
  });

  test('counts lines inside quoted fields, so later line numbers stay right', () => {
    const errors = errorsOf(
      csv('"2026-01-01",8000,,,,,,,,,,', '2026-01-02,"8\n000",,,,,,,,,,', '2026-01-03,x,,,,,,,,,,'),
    );
    expect(errors.map((e) => e.line)).toEqual([3, 5]);
    expect(errorsOf(csv(GOOD_ROW, '2026-01-02,"8000,,,,,,,,,,'))).toEqual([
      { line: 3, message: 'a quoted field is never closed' },
    ]);
  });

  test('stops listing after 100 errors and says how many more there are', () => {
    const bad = Array.from({ length: 150 }, (_, i) => `2026-01-01,x${i},,,,,,,,,,`.replace('2026-01-01', `day${i}`));
    const errors = errorsOf(csv(...bad));
    expect(errors).toHaveLength(101);
    expect(errors[99].line).toBe(51);
    expect(errors[100]).toEqual({ line: 52, message: '…and 200 more error(s) from this line on' });
  });

  test('rejects an empty file, a file over 5 MB and more than 20,000 rows', () => {
    expect(errorsOf('')).toEqual([{ line: 1, message: expect.stringMatching(/empty/) }]);
    expect(errorsOf(csv(GOOD_ROW) + ' '.repeat(5 * 1024 * 1024))[0].message).toMatch(/limit is 5242880/);
    const many = Array.from({ length: MAX_CSV_ROWS + 1 }, (_, i) => `${i},,,,,,,,,,,`);
    expect(errorsOf(csv(...many))).toEqual([
      { line: MAX_CSV_ROWS + 2, message: expect.stringMatching(/more than 20000 rows/) },
    ]);
  });
});

describe('importDailySummary', () => {
  let t: TestDatabase;
  const history = generateHealthData({ seed: 11, days: 60, endDate: new Date('2026-03-31') }).daily;

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  const storedRows = async (userId: string) => (await readUserHealthData(t.pool, userId)).daily;

  test('imports a good file exactly, nulls included', async () => {
    const { user } = await createUserWithApiKey(t.pool, 'importer');
    expect(await importDailySummary(t.pool, user.id, toCsv(history))).toEqual({ inserted: 60, updated: 0 });
    expect(await storedRows(user.id)).toEqual(history);
  });

  test('a re-import updates the repeated days instead of duplicating them', async () => {
    const { user } = await createUserWithApiKey(t.pool, 'reimporter');
    await importDailySummary(t.pool, user.id, toCsv(history.slice(0, 40)));
    const changed = history.slice(30).map((row) => ({ ...row, steps: 12_345, sleep_score: null }));
    expect(await importDailySummary(t.pool, user.id, toCsv(changed))).toEqual({ inserted: 20, updated: 10 });
    expect(await storedRows(user.id)).toEqual([...history.slice(0, 30), ...changed]);
  });

  test('one bad row among good ones imports nothing', async () => {
    const { user } = await createUserWithApiKey(t.pool, 'careful');
    await importDailySummary(t.pool, user.id, toCsv(history.slice(0, 10)));
    const before = await storedRows(user.id);
    const lines = toCsv(history.map((row) => ({ ...row, steps: 1 }))).split('\n');
    lines[31] = lines[31].replace(/^(\d{4}-\d\d-\d\d),\d*/, '$1,-5');
    const failure = await importDailySummary(t.pool, user.id, lines.join('\n')).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DailySummaryCsvError);
    expect((failure as DailySummaryCsvError).errors).toEqual([
      { line: 32, message: 'steps: -5 is outside the accepted range 0–60000' },
    ]);
    expect(await t.db.dailySummary.count({ where: { userId: user.id } })).toBe(10);
    expect(await storedRows(user.id)).toEqual(before);
  });

  test('scripts/data-import.ts: prints every error and exits 1, or imports and prints the counts', async () => {
    const { user } = await createUserWithApiKey(t.pool, 'cli-user');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-csv-'));
    const good = path.join(dir, 'good.csv');
    const bad = path.join(dir, 'bad.csv');
    fs.writeFileSync(good, toCsv(history.slice(0, 5)));
    fs.writeFileSync(bad, csv(GOOD_ROW, '2026-01-02,abc,,,,,,,,,,', '2026-01-03,,,,,,,999,,,,'));
    const runImport = (...args: string[]) => runCli('scripts/data-import.ts', args, { DATABASE_URL: t.url });
    try {
      const [rejected, missingUser] = await Promise.all([runImport('cli-user', bad), runImport('nobody', good)]);
      expect(rejected.code).toBe(1);
      expect(rejected.stderr).toContain('line 3: steps: "abc" is not a number');
      expect(rejected.stderr).toContain('line 4: resting_heart_rate: 999 is outside the accepted range 30–120');
      expect(rejected.stderr).toContain('was not imported');
      expect(await t.db.dailySummary.count({ where: { userId: user.id } })).toBe(0);
      expect(missingUser.code).toBe(1);
      expect(missingUser.stderr).toContain('no user named "nobody"');

      const imported = await runImport('cli-user', good);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain('5 day(s) inserted, 0 updated');
      expect(await storedRows(user.id)).toEqual(history.slice(0, 5));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('resolveDatabaseUrl (scripts/cli-env.ts)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-stack-'));
  const stackFile = path.join(dir, 'stack.json');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('prefers DATABASE_URL, then the stack file npm start writes, else says what to do', () => {
    expect(() => resolveDatabaseUrl({}, stackFile)).toThrow(CliError);
    expect(() => resolveDatabaseUrl({}, stackFile)).toThrow(
      /set DATABASE_URL, or start the local stack with `npm start`/,
    );

    fs.writeFileSync(
      stackFile,
      JSON.stringify({ postgres_url: 'postgresql://amy@127.0.0.1:5999/amy', api_port: 3000 }),
    );
    expect(resolveDatabaseUrl({}, stackFile)).toBe('postgresql://amy@127.0.0.1:5999/amy');
    expect(resolveDatabaseUrl({ DATABASE_URL: 'postgresql://elsewhere/db' }, stackFile)).toBe(
      'postgresql://elsewhere/db',
    );

    fs.writeFileSync(stackFile, '{"postgres_');
    expect(() => resolveDatabaseUrl({}, stackFile)).toThrow(/has no postgres_url/);
  });
});
