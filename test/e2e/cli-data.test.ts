/**
 * `amy data` end to end: the built CLI run as a child process against the real service, for a user of
 * its own. A file of more days than one request holds and more than one page lists goes up in batches;
 * lists and the profile read back through the CLI match the API's; an export holds everything; after
 * everything is deleted, uploading the export restores the same rows (a second export is the same,
 * byte for byte). A bad row in a later batch is told by its file line, with what was stored and the
 * command that resumes, which then completes the upload.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Amy, type DailySummary, type LabResult, type Workout } from '@amy/sdk';
import { formatIsoDate } from '../../contracts/health-records';
import { AMY_BIN, ensureCliBuilt } from '../support/workspace-build';
import { runAmy, startAmy } from '../support/cli/run-amy';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(90_000);

let svc: TestService;
let env: Record<string, string>;
let amy: Amy;

beforeAll(async () => {
  ensureCliBuilt();
  svc = await startTestService();
  const user = await svc.createUser('cli_data');
  env = { AMY_API_KEY: user.apiKey, AMY_BASE_URL: svc.url };
  amy = new Amy({ apiKey: user.apiKey, baseUrl: svc.url });
}, 120_000);
afterAll(() => svc?.close());

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'amy-cli-data-'));
const ndjson = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The day `offset` days from today in UTC (negative: in the past). */
const day = (offset: number) => formatIsoDate(new Date(Date.now() + offset * 86_400_000));

/** More days than one request (500) holds and than one page (1,000) lists; fractions and gaps included. */
const DAYS = 1_100;
const dailyRows = Array.from({ length: DAYS }, (_, i) => ({
  date: day(-DAYS + i),
  steps: 4_000 + ((i * 37) % 9_000),
  resting_heart_rate: 55 + (i % 9) / 2,
  ...(i % 3 === 0
    ? { sleep_minutes: 430, deep_sleep_minutes: 80, rem_sleep_minutes: 95, light_sleep_minutes: 220, awake_minutes: 30 }
    : {}),
  ...(i % 5 === 0 ? { heart_rate_variability: 42.7, sleep_score: 78 } : {}),
}));

const TYPES = ['running', 'cycling', 'strength', 'yoga', 'walking', 'swimming', 'HIIT'] as const;
const workoutRows = Array.from({ length: 9 }, (_, i) => ({
  external_id: `watch:${i}/${TYPES[i % TYPES.length]}`,
  date: day(-20 + i),
  type: TYPES[i % TYPES.length],
  duration_minutes: 20 + i * 5,
  ...(i % 2 === 0 ? { distance_km: 3.5 + i, calories: 200 + i * 10, avg_heart_rate: 120 + i } : {}),
}));
/** Lab results in the units a lab reports, some not canonical (LDL in mmol/L is stored in mg/dL). */
const labRows = [
  { date: day(-30), biomarker: 'ldl_cholesterol', value: 3.36, unit: 'mmol/L' },
  { date: day(-30), biomarker: 'hba1c', value: 5.4, unit: '%' },
  { date: day(-10), biomarker: 'ldl_cholesterol', value: 118, unit: 'mg/dL' },
  { date: day(-10), biomarker: 'tsh', value: 2.1, unit: 'mIU/L' },
];
const profile = { sex: 'female' as const, birth_year: 1987, height_cm: 167.5, weight_kg: 61.2 };

async function allDaily(): Promise<DailySummary[]> {
  const rows: DailySummary[] = [];
  for await (const row of amy.data.daily.list({ limit: 1000 })) rows.push(row);
  return rows;
}
async function allLabs(): Promise<LabResult[]> {
  const rows: LabResult[] = [];
  for await (const row of amy.data.labs.list({ limit: 1000 })) rows.push(row);
  return rows;
}
async function allWorkouts(): Promise<Workout[]> {
  const rows: Workout[] = [];
  for await (const row of amy.data.workouts.list({ limit: 1000 })) rows.push(row);
  return rows;
}

describe('upload, list, export, delete, and the export uploaded again', () => {
  const work = tempDir();
  const exported = path.join(work, 'export');
  let daily: DailySummary[];
  let workouts: Workout[];
  let labs: LabResult[];

  test('upload daily from JSON lines: in batches of 500, every row stored', async () => {
    // A blank line in the middle, as files edited by hand have.
    const lines = dailyRows.map((row) => JSON.stringify(row));
    lines.splice(600, 0, '');
    fs.writeFileSync(path.join(work, 'daily.jsonl'), `${lines.join('\n')}\n`);
    const run = await runAmy(['data', 'upload', 'daily', 'daily.jsonl', '--json'], { env, cwd: work });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(ndjson(run.stdout)).toEqual([
      { lines: [1, 500], rows: 500, inserted: 500, updated: 0 },
      { lines: [501, 1001], rows: 500, inserted: 500, updated: 0 },
      { lines: [1002, 1101], rows: 100, inserted: 100, updated: 0 },
      { done: true, rows: DAYS, inserted: DAYS, updated: 0 },
    ]);
    daily = await allDaily();
    expect(daily).toHaveLength(DAYS);
    expect(daily[0]).toMatchObject(dailyRows[0]);
    expect(daily.at(-1)).toMatchObject(dailyRows.at(-1)!);
  });

  test('upload workouts from a JSON array; the profile with set', async () => {
    fs.writeFileSync(path.join(work, 'workouts.json'), JSON.stringify(workoutRows, null, 2));
    const run = await runAmy(['data', 'upload', 'workouts', 'workouts.json'], { env, cwd: work });
    expect(run).toMatchObject({
      code: 0,
      stdout: `Uploaded ${workoutRows.length} workouts from workouts.json in 1 request: ${workoutRows.length} new, 0 replaced.\n`,
    });
    workouts = await allWorkouts();
    expect(workouts.map((w) => w.external_id).sort()).toEqual(workoutRows.map((w) => w.external_id).sort());

    fs.writeFileSync(path.join(work, 'labs.jsonl'), labRows.map((row) => JSON.stringify(row)).join('\n'));
    const labRun = await runAmy(['data', 'upload', 'labs', 'labs.jsonl'], { env, cwd: work });
    expect(labRun).toMatchObject({
      code: 0,
      stdout: 'Uploaded 4 lab results from labs.jsonl in 1 request: 4 new, 0 replaced.\n',
    });
    labs = await allLabs();
    expect(labs.map((l) => [l.date, l.biomarker, l.unit])).toEqual([
      [day(-30), 'hba1c', '%'],
      [day(-30), 'ldl_cholesterol', 'mg/dL'],
      [day(-10), 'ldl_cholesterol', 'mg/dL'],
      [day(-10), 'tsh', 'mIU/L'],
    ]);

    const set = await runAmy(
      [
        'data',
        'profile',
        'set',
        '--sex',
        'female',
        '--birth-year',
        '1987',
        '--height-cm',
        '167.5',
        '--weight-kg',
        '61.2',
      ],
      { env },
    );
    expect(set.code).toBe(0);
    expect(await amy.data.profile.get()).toEqual(profile);
    const shown = await runAmy(['data', 'profile'], { env });
    expect(shown.stdout).toBe('sex         female\nbirth_year  1987\nheight_cm   167.5\nweight_kg   61.2\n');
  });

  test('list: NDJSON as the API pages it, a table, filters, and a note when there is more', async () => {
    const all = await runAmy(['data', 'list', 'daily', '--all', '--json'], { env });
    expect(all.code).toBe(0);
    expect(ndjson(all.stdout)).toEqual(daily);

    const range = await runAmy(['data', 'list', 'daily', '--from', daily[10].date, '--to', daily[12].date], { env });
    expect(range).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = range.stdout.trimEnd().split('\n');
    expect(header.split(/ +/)).toEqual([
      'date',
      'steps',
      'sleep',
      'deep',
      'rem',
      'light',
      'awake',
      'rhr',
      'hrv',
      'stress',
      'azm',
      'score',
    ]);
    expect(rows.map((row) => row.split(/ +/).slice(0, 2))).toEqual(
      daily.slice(10, 13).map((d) => [d.date, String(d.steps)]),
    );

    const first = await runAmy(['data', 'list', 'daily', '--limit', '3'], { env });
    expect(first.stdout.trimEnd().split('\n')).toHaveLength(4);
    expect(first.stderr).toBe('(first 3 rows; --limit N or --all for more, `amy data export` for a file)\n');

    const runs = await runAmy(['data', 'list', 'workouts', '--type', 'running', '--json'], { env });
    expect(ndjson(runs.stdout)).toEqual(workouts.filter((w) => w.type === 'running'));

    const ldl = await runAmy(['data', 'list', 'labs', '--biomarker', 'ldl_cholesterol', '--json'], { env });
    expect(ndjson(ldl.stdout)).toEqual(labs.filter((l) => l.biomarker === 'ldl_cholesterol'));
    const labTable = await runAmy(['data', 'list', 'labs'], { env });
    expect(labTable.stdout.split('\n')[0].split(/ +/)).toEqual(['date', 'biomarker', 'value', 'unit', 'loinc']);
    expect(labTable.stdout).toMatch(new RegExp(`^${day(-10)} +tsh +2\\.1 +mIU/L +\\S+$`, 'm'));
  });

  test('export: every row and the profile, in files of their own; no overwrite without --force', async () => {
    const run = await runAmy(['data', 'export', exported], { env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`  daily.jsonl     ${DAYS} daily rows\n`);
    expect(ndjson(fs.readFileSync(path.join(exported, 'daily.jsonl'), 'utf8'))).toEqual(daily);
    expect(ndjson(fs.readFileSync(path.join(exported, 'workouts.jsonl'), 'utf8'))).toEqual(workouts);
    expect(ndjson(fs.readFileSync(path.join(exported, 'labs.jsonl'), 'utf8'))).toEqual(
      labs.map(({ date, biomarker, value, unit }) => ({ date, biomarker, value, unit })),
    );
    expect(JSON.parse(fs.readFileSync(path.join(exported, 'profile.json'), 'utf8'))).toEqual(profile);
    expect(fs.readdirSync(exported).sort()).toEqual(['daily.jsonl', 'labs.jsonl', 'profile.json', 'workouts.jsonl']);

    const again = await runAmy(['data', 'export', exported], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /^error: daily\.jsonl, workouts\.jsonl, labs\.jsonl, profile\.json already exist in .*--force replaces them\.\n$/,
    );
  });

  test('delete: a day range, and each workout; a workout that is not there is exit 2', async () => {
    const days = await runAmy(['data', 'delete', 'daily', '--from', daily[0].date, '--to', day(0)], { env });
    expect(days).toMatchObject({ code: 0, stdout: `Deleted ${DAYS} daily rows from ${daily[0].date} to ${day(0)}.\n` });
    for (const { external_id } of workouts) {
      expect((await runAmy(['data', 'delete', 'workout', external_id], { env })).code).toBe(0);
    }
    const labRun = await runAmy(['data', 'delete', 'labs', '--from', day(-30), '--to', day(0)], { env });
    expect(labRun).toMatchObject({ code: 0, stdout: `Deleted 4 lab results from ${day(-30)} to ${day(0)}.\n` });
    expect(await allDaily()).toEqual([]);
    expect(await allWorkouts()).toEqual([]);
    expect(await allLabs()).toEqual([]);
    const missing = await runAmy(['data', 'delete', 'workout', workouts[0].external_id], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: .*\(not_found, request req_\w+\)\n$/);
    // The profile has no delete in the API: change it, so that restoring it shows.
    await amy.data.profile.put({ ...profile, weight_kg: 70 });
  });

  test('the export uploaded again restores the same rows; a second export is the same, byte for byte', async () => {
    for (const [table, file] of [
      ['daily', 'daily.jsonl'],
      ['workouts', 'workouts.jsonl'],
      ['labs', 'labs.jsonl'],
    ]) {
      const run = await runAmy(['data', 'upload', table, path.join(exported, file)], { env });
      expect(run.code).toBe(0);
    }
    expect(
      (await runAmy(['data', 'profile', 'set', '--file', path.join(exported, 'profile.json')], { env })).code,
    ).toBe(0);
    expect(await allDaily()).toEqual(daily);
    expect(await allWorkouts()).toEqual(workouts);
    expect(await allLabs()).toEqual(labs);
    expect(await amy.data.profile.get()).toEqual(profile);

    const second = path.join(work, 'second');
    expect((await runAmy(['data', 'export', second], { env })).code).toBe(0);
    for (const file of ['daily.jsonl', 'workouts.jsonl', 'labs.jsonl', 'profile.json']) {
      expect(fs.readFileSync(path.join(second, file), 'utf8')).toBe(fs.readFileSync(path.join(exported, file), 'utf8'));
    }
  });
});

describe('on a terminal', () => {
  test('export shows its progress on stderr, redrawn on one line and erased before the summary', async () => {
    const dir = path.join(tempDir(), 'export');
    const command = `exec ${process.execPath} ${AMY_BIN} data export ${dir}`;
    const terminal = startAmy([], { env, command: ['script', ['-q', '-e', '-c', command, '/dev/null']] });
    const run = await terminal.exited;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`\rExporting daily rows: 1000\x1b[K\rExporting daily rows: ${DAYS}\x1b[K`);
    expect(run.stdout).toContain('\r\x1b[KExported to ');
    expect(ndjson(fs.readFileSync(path.join(dir, 'daily.jsonl'), 'utf8'))).toHaveLength(DAYS);
  });
});

describe('a bad row in a file', () => {
  test('told by its line and field; the batches before it stored, none of its own; the resume command completes it', async () => {
    const dir = tempDir();
    const rows = Array.from({ length: 6 }, (_, i) => ({ date: day(-2_000 - i), steps: 1_000 + i }));
    const lines = rows.map((row, i) => JSON.stringify(i === 3 ? { ...row, steps: 70_000 } : row));
    fs.writeFileSync(path.join(dir, 'days.jsonl'), `${lines.join('\n')}\n`);
    const run = await runAmy(['data', 'upload', 'daily', 'days.jsonl', '--batch-size', '2'], { env, cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const [error, stored, resume] = run.stderr.trimEnd().split('\n');
    expect(error).toMatch(
      /^error: days\.jsonl line 4 was refused: steps: is outside the accepted range 0–60000\. \(rows\[1\]\.steps of the request for lines 3–4; invalid_field, request req_\w+\)$/,
    );
    expect(stored).toBe(
      'Stored 2 daily rows before this; nothing of lines 3–4 was stored (a request is stored whole or not at all).',
    );
    expect(resume).toBe('Fix line 4, then resume with: amy data upload daily days.jsonl --batch-size 2 --start-line 3');
    const range = { from: day(-2_010), to: day(-1_990) };
    expect((await amy.data.daily.list(range)).data.map((d) => d.date).sort()).toEqual(
      [rows[0].date, rows[1].date].sort(),
    );

    fs.writeFileSync(path.join(dir, 'days.jsonl'), `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
    const resumed = await runAmy(resume.replace(/^.*resume with: amy /, '').split(' '), { env, cwd: dir });
    expect(resumed).toMatchObject({
      code: 0,
      stdout: 'Uploaded 4 daily rows from days.jsonl in 2 requests: 4 new, 0 replaced.\n',
    });
    expect((await amy.data.daily.list(range)).data).toHaveLength(6);
    expect(await amy.data.daily.delete(range)).toBe(6);
  });

  test('a line that is not JSON stops the upload before anything is sent', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'days.jsonl'), `${JSON.stringify({ date: day(-3_000), steps: 1 })}\n{"date": \n`);
    const run = await runAmy(['data', 'upload', 'daily', 'days.jsonl'], { env, cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: days\.jsonl line 2 is not valid JSON/);
    expect((await amy.data.daily.list({ from: day(-3_000), to: day(-3_000) })).data).toEqual([]);
  });

  test('a key the API refuses: exit 2, nothing stored', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'days.jsonl'), `${JSON.stringify({ date: day(-3_001), steps: 1 })}\n`);
    const run = await runAmy(['data', 'upload', 'daily', 'days.jsonl'], {
      env: { ...env, AMY_API_KEY: 'amy_not_a_key' },
      cwd: dir,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^error: The API key is not valid\. \(invalid_api_key, request req_\w+\)\nNothing was stored\.\n/,
    );
  });
});
