/**
 * A user with no health data (docs/design.md#no-data-to-compute-from), end to end on the real service: a data
 * question, an open-ended "anything in my data?" and coaching on their data each complete with a reply, decided
 * from the turn's snapshot, that says there is no data and what to upload, with no number and an empty fact
 * sheet; with workouts only, it names the daily summaries as empty. Once daily rows are uploaded through the
 * API, the same data question is computed, and a question about their own labs says none are uploaded. Real
 * Temporal, Postgres, sandbox and gates, and the scripted model.
 */
import { Pool } from 'pg';
import { eventDataSchemas, type TurnEvent, type TurnEventType } from '../../contracts/event-data';
import { turnSchema, type Turn } from '../../contracts/turn';
import { extractNumbers } from '../../checks/numbers';
import { createEventLog } from '../../platform/event-log';
import { readUserHealthData } from '../../platform/health-data/store';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(180_000);

const DATA_QUESTION = 'What is my average resting heart rate over the last 90 days?';
const OPEN_QUESTION = 'Is there anything interesting in my data?';
const COACHING_QUESTION = 'Help me plan better deep sleep based on my data';

let svc: TestService;
let pool: Pool;

type User = { userId: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await svc?.close();
});

async function ask(user: User, content: string): Promise<{ turn: Turn; events: TurnEvent[] }> {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }] },
  });
  expect(created.status).toBe(201);
  const turnId: string = created.body.id;
  await svc.temporal.workflow
    .getHandle(turnId)
    .result()
    .catch(() => undefined);
  const fetched = await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  const events = await createEventLog(pool).readAfter(turnId, 0, 10_000);
  for (const e of events) expectSchema(eventDataSchemas[e.type as TurnEventType], e.data);
  return { turn: expectSchema(turnSchema, fetched.body), events };
}

async function modelSteps(turnId: string): Promise<string[]> {
  const { rows } = await pool.query<{ step: string }>('SELECT step FROM llm_calls WHERE turn_id = $1 ORDER BY id', [
    turnId,
  ]);
  return rows.map((r) => r.step);
}

/** The reply to a user with no rows at all: says so, names every table and how to upload it, states no number. */
function expectNoDataReply(turn: Turn) {
  expect(turn.status).toBe('completed');
  const answer = turn.result!.answer;
  expect(answer).toMatch(/haven't uploaded any health data/);
  for (const table of ['Daily summaries', 'Workouts', 'Lab results', 'Profile']) expect(answer).toContain(table);
  for (const route of ['POST /v1/data/daily', 'POST /v1/data/workouts', 'POST /v1/data/labs', 'PUT /v1/data/profile']) {
    expect(answer).toContain(route);
  }
  expect(answer).toContain('amy data upload');
  expect(answer).toContain('docs/api.md#health-data');
  expect(extractNumbers(answer)).toEqual([]);
  expect(turn.result!.fact_sheet).toEqual([]);
  expect(turn.result!.fact_check).toMatchObject({ numbers_checked: 0, issues: [] });
  expect(turn.data_snapshot).toMatchObject({ daily_rows: 0, workouts: 0, lab_results: 0, profile: false });
}

/** The streamed text of a step's last attempt: what a client that drops superseded attempts shows. */
function streamedText(events: TurnEvent[], step: string): string {
  const deltas = events.filter((e) => e.type === 'agent.thought' && e.data.step === step);
  const last = Math.max(...deltas.map((e) => Number(e.data.attempt)));
  return deltas
    .filter((e) => e.data.attempt === last)
    .map((e) => e.data.delta)
    .join('');
}

describe('a user with no health data', () => {
  let user: User;
  beforeAll(async () => {
    user = await svc.createUser();
  });

  test('a data question completes with the no-data reply, from no model call after the routing', async () => {
    const { turn, events } = await ask(user, DATA_QUESTION);
    expectNoDataReply(turn);
    expect(turn.result!.agents_used).toEqual(['data_science']);
    expect(streamedText(events, 'synthesis')).toBe(turn.result!.answer);
    const completed = events.filter((e) => e.type === 'agent.completed').map((e) => e.data.agent);
    expect(completed).toEqual(['data_science', 'synthesis', 'memory']);
    // Nothing was planned, written or summarised: the snapshot's counts decided it.
    const steps = await modelSteps(turn.id);
    for (const step of ['ds_plan', 'ds_code', 'ds_debug', 'ds_summary', 'synthesis']) expect(steps).not.toContain(step);
  });

  test('an open-ended question goes to the Investigator and gets the same reply as its briefing', async () => {
    const { turn, events } = await ask(user, OPEN_QUESTION);
    expectNoDataReply(turn);
    expect(turn.result!.agents_used).toEqual(['investigator']);
    expect(streamedText(events, 'investigator_briefing')).toBe(turn.result!.answer);
    const steps = await modelSteps(turn.id);
    expect(steps).not.toContain('investigator_hypotheses');
    expect(steps).not.toContain('investigator_briefing');
  });

  test('coaching on their data gets the no-data reply too', async () => {
    const { turn } = await ask(user, COACHING_QUESTION);
    expectNoDataReply(turn);
    expect(turn.result!.agents_used).toContain('data_science');
  });

  test('with workouts but no daily summaries, a data question says the daily summaries are empty', async () => {
    const partial = await svc.createUser();
    const uploaded = await api(svc.url, 'POST', '/v1/data/workouts', {
      key: partial.apiKey,
      body: { rows: [{ external_id: 'w-one', date: '2025-03-01', type: 'running', duration_minutes: 30 }] },
    });
    expect(uploaded.status).toBe(200);
    const { turn } = await ask(partial, DATA_QUESTION);
    expect(turn.status).toBe('completed');
    const answer = turn.result!.answer;
    expect(answer).toMatch(/no daily summaries/);
    expect(answer).toContain('What you have uploaded so far: workouts');
    expect(answer).toContain('POST /v1/data/daily');
    expect(extractNumbers(answer)).toEqual([]);
    expect(turn.result!.fact_sheet).toEqual([]);
  });

  test('after daily rows are uploaded, the same question is computed', async () => {
    const donor = await svc.createUser();
    await seedDemoHealthData(pool, donor.userId);
    const { daily } = await readUserHealthData(pool, donor.userId);
    const rows = daily.slice(-120);
    const uploaded = await api(svc.url, 'POST', '/v1/data/daily', { key: user.apiKey, body: { rows } });
    expect(uploaded.body).toEqual({ inserted: rows.length, updated: 0 });

    const { turn } = await ask(user, DATA_QUESTION);
    expect(turn.status).toBe('completed');
    const mean = turn.result!.fact_sheet.find((e) => e.claim === 'ds-001.mean');
    expect(mean).toMatchObject({ unit: 'bpm', source: 'data_science' });
    expect(turn.result!.answer).not.toMatch(/haven't uploaded/);
    expect(extractNumbers(turn.result!.answer).length).toBeGreaterThan(0);
  });

  test('with daily rows but no labs, a question about their own labs says no lab results are uploaded', async () => {
    // `user` has daily rows now (the test before), and still no lab results.
    const { turn, events } = await ask(user, 'What was my most recent LDL and is it in range?');
    expect(turn.status).toBe('completed');
    expect(turn.data_snapshot).toMatchObject({ lab_results: 0 });
    const answer = turn.result!.answer;
    expect(answer).toMatch(
      /You have no lab results uploaded yet[\s\S]*POST \/v1\/data\/labs[\s\S]*amy data upload labs/,
    );
    expect(answer).toContain('docs/api.md#health-data');
    expect(streamedText(events, 'synthesis')).toBe(answer);
    expect(turn.result!.fact_check).toMatchObject({ issues: [] });
  });
});
