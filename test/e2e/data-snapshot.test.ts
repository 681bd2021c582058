/**
 * One view of the user's data per turn, end to end (docs/design.md#one-snapshot-of-the-users-data-per-turn):
 * a data question is held after its plan while the user uploads changed daily rows (every resting heart rate
 * of the window raised, and a new day after the last), and the turn still computes, reproduces and validates
 * its number over the rows it started with; the Turn says which snapshot it used; the next turn sees the
 * new rows. A turn failed at the coach and retried by an operator (`turn:retry`) after an upload keeps
 * the snapshot its first attempt took. Real Temporal, Postgres, sandbox and gates, and the scripted model.
 */
import { Pool } from 'pg';
import { GATE_NAMES } from '../../contracts/findings';
import { turnSchema, type Turn } from '../../contracts/turn';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { formatIsoDate, type DailyRow } from '../../contracts/health-records';
import { readUserHealthData } from '../../platform/health-data/store';
import { computeAnchors } from '../../activities/agents/health-coach/anchors';
import { runCli } from '../support/cli';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(180_000);

const QUESTION = 'What is my average resting heart rate over the last 90 days?';
const WINDOW_DAYS = 90;
const DAY_MS = 86_400_000;
/** How long the code step's answer is held back: time enough to upload while the turn waits on it. */
const HOLD_MS = 6_000;

let svc: TestService;
let pool: Pool;

type User = { userId: string; apiKey: string };

/** A user whose history ends yesterday, so that an upload can add a day after its last. */
async function userWithHistory(): Promise<User> {
  const created = await svc.createUser();
  await seedDemoHealthData(pool, created.userId, { endDate: new Date(Date.now() - DAY_MS) });
  return created;
}

beforeAll(async () => {
  svc = await startTestService();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await svc?.close();
});

/** The mean and n of resting_heart_rate over the 90 days ending at the rows' last day, as the scripted code computes it. */
function windowMean(daily: readonly DailyRow[]): { mean: number; n: number } {
  const last = Date.parse(`${daily[daily.length - 1].date}T00:00:00Z`);
  const values = daily
    .filter((row) => Date.parse(`${row.date}T00:00:00Z`) > last - WINDOW_DAYS * DAY_MS)
    .map((row) => row.resting_heart_rate)
    .filter((v): v is number => v !== null);
  return { mean: values.reduce((a, b) => a + b, 0) / values.length, n: values.length };
}

async function startTurn(user: User, question = QUESTION): Promise<string> {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: question }] },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function finished(user: User, turnId: string): Promise<Turn> {
  await svc.temporal.workflow
    .getHandle(turnId)
    .result()
    .catch(() => undefined);
  const fetched = await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  return expectSchema(turnSchema, fetched.body);
}

/** Uploads the rows through the API, as a client would. */
async function upload(user: User, rows: DailyRow[]): Promise<void> {
  const uploaded = await api(svc.url, 'POST', '/v1/data/daily', { key: user.apiKey, body: { rows } });
  expect(uploaded.body).toEqual({ inserted: 1, updated: rows.length - 1 });
}

/** Waits until the turn's plan has been written, i.e. its first read of the user's data is behind it. */
async function planned(turnId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { rowCount } = await pool.query(`SELECT 1 FROM llm_calls WHERE turn_id = $1 AND step = 'ds_plan'`, [turnId]);
    if (rowCount) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the turn never planned its analysis');
}

const meanOf = (turn: Turn) => turn.result!.fact_sheet.find((e) => e.claim === 'ds-001.mean');

describe('new rows uploaded while a data question runs', () => {
  let user: User;
  let before: DailyRow[];
  let after: DailyRow[];
  let held: Turn;
  let next: Turn;
  let uploadedAt: number;
  let createdAt: number;

  beforeAll(async () => {
    user = await userWithHistory();
    before = (await readUserHealthData(pool, user.userId)).daily;
    svc.scripted.faults.inject({ kind: 'slow', step: 'ds_code', delay_ms: HOLD_MS });
    createdAt = Date.now();
    const turnId = await startTurn(user);
    await planned(turnId);

    // Every day of the window gets a resting heart rate 20 bpm higher, and today joins as a new day.
    const window = before.slice(-WINDOW_DAYS);
    const raised = window.map((row) => ({
      ...row,
      resting_heart_rate: row.resting_heart_rate === null ? null : row.resting_heart_rate + 20,
    }));
    await upload(user, [...raised, { ...raised[raised.length - 1], date: formatIsoDate(new Date()) }]);
    uploadedAt = Date.now();
    after = (await readUserHealthData(pool, user.userId)).daily;

    held = await finished(user, turnId);
    next = await finished(user, await startTurn(user));
  });

  test('the held turn computed over the rows it started with, not the uploaded ones', () => {
    expect(held.status).toBe('completed');
    const original = windowMean(before);
    const uploaded = windowMean(after);
    expect(Math.abs(uploaded.mean - original.mean)).toBeGreaterThan(10);
    expect(meanOf(held)).toMatchObject({ n: original.n });
    expect(meanOf(held)!.value).toBeCloseTo(original.mean, 9);
  });

  test('its number checked on the same rows: validated, the reproduction gate recomputing the same mean, sample_size counting the same days', async () => {
    expect(held.result!.validator).toMatchObject({ findings_total: 1, findings_validated: 1 });
    const { rows } = await pool.query<{
      data: { gate: string; verdict: string; detail: { n?: number; numbers?: { key: string; recomputed: number }[] } };
    }>(`SELECT data FROM turn_events WHERE turn_id = $1 AND type = 'validator.gate' ORDER BY id`, [held.id]);
    // A mean is a description: its reproduction first, then the seven gates (sample_size and bootstrap apply).
    expect(rows.map((r) => r.data.gate)).toEqual([...GATE_NAMES]);
    const gate = (name: string) => rows.find((r) => r.data.gate === name)!.data;
    const recomputed = gate('reproduction').detail.numbers!.find((number) => number.key === 'mean')!.recomputed;
    expect(recomputed).toBeCloseTo(windowMean(before).mean, 9);
    expect(gate('sample_size')).toMatchObject({ verdict: 'passed', detail: { n: windowMean(before).n } });
  });

  test('the Turn says which snapshot it used: taken before the upload, with the rows it held', async () => {
    const { rows } = await pool.query<{ workouts: number; labs: number }>(
      `SELECT (SELECT count(*)::int FROM workouts WHERE user_id = $1) AS workouts,
              (SELECT count(*)::int FROM lab_biomarkers WHERE user_id = $1) AS labs`,
      [user.userId],
    );
    expect(held.data_snapshot).toEqual({
      taken_at: expect.any(String),
      daily_rows: before.length,
      workouts: rows[0].workouts,
      lab_results: rows[0].labs,
      lab_results_withheld: false,
      profile: true,
    });
    const takenAt = Date.parse(held.data_snapshot!.taken_at);
    expect(takenAt).toBeGreaterThanOrEqual(createdAt - 1000);
    expect(takenAt).toBeLessThan(uploadedAt);
    expect(new Date(takenAt).toISOString()).toBe(held.data_snapshot!.taken_at);
  });

  test('the snapshot still holds the rows the turn used, after the upload', async () => {
    const { rows } = await pool.query<{ daily: DailyRow[] }>(
      'SELECT daily FROM turn_data_snapshots WHERE turn_id = $1',
      [held.id],
    );
    expect(windowMean(rows[0].daily)).toEqual(windowMean(before));
  });

  test('the next turn sees the new rows', () => {
    expect(next.status).toBe('completed');
    const uploaded = windowMean(after);
    expect(meanOf(next)).toMatchObject({ n: uploaded.n });
    expect(meanOf(next)!.value).toBeCloseTo(uploaded.mean, 9);
    expect(next.data_snapshot).toMatchObject({ daily_rows: before.length + 1 });
    expect(Date.parse(next.data_snapshot!.taken_at)).toBeGreaterThanOrEqual(uploadedAt - 1000);
  });
});

describe('a failed turn retried by an operator after an upload', () => {
  const COACHING = 'Using my data, how can I get my bedtime more regular?';
  let user: User;
  let before: DailyRow[];
  let after: DailyRow[];
  let failed: Turn;
  let retried: Turn;

  beforeAll(async () => {
    user = await userWithHistory();
    before = (await readUserHealthData(pool, user.userId)).daily;
    // The coach (which reads the data for its anchors) fails past its retries, so the turn fails there.
    svc.scripted.faults.inject({ kind: 'server_error', step: 'health_coach.gate', times: -1 });
    const turnId = await startTurn(user, COACHING);
    failed = await finished(user, turnId);
    svc.scripted.faults.clear();

    // Four weeks of days with 3,000 more steps, and today as a new day.
    const raised = before.slice(-28).map((row) => ({ ...row, steps: (row.steps ?? 0) + 3000 }));
    await upload(user, [...raised, { ...raised[raised.length - 1], date: formatIsoDate(new Date()) }]);
    after = (await readUserHealthData(pool, user.userId)).daily;

    const env = {
      TEMPORAL_ADDRESS: svc.config.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: svc.config.TEMPORAL_NAMESPACE,
      DATABASE_URL: svc.config.DATABASE_URL,
    };
    const retry = await runCli('scripts/turn-retry.ts', [turnId, '--wait'], env);
    expect(retry.stdout).toContain(`turn ${turnId}: attempt 2 completed`);
    retried = await finished(user, turnId);
  });

  test('the first attempt failed at the coach, after its snapshot was taken', () => {
    expect(failed).toMatchObject({ status: 'failed', attempt: 1 });
    expect(failed.data_snapshot).toMatchObject({ daily_rows: before.length });
  });

  test('the second attempt kept that snapshot: the coach’s anchors are the first rows’, not the uploaded ones', () => {
    expect(retried).toMatchObject({ status: 'completed', attempt: 2 });
    expect(retried.data_snapshot).toEqual(failed.data_snapshot);
    const anchors = retried.result!.personal_anchors!;
    const expected = (daily: DailyRow[]) =>
      computeAnchors(daily).map((a) => ({ claim: `anchor.${a.key}`, value: a.value, n: a.n, window: a.window }));
    expect(expected(after)).not.toEqual(expected(before));
    expect(anchors.map(({ claim, value, n, window }) => ({ claim, value, n, window }))).toEqual(expected(before));
  });
});
