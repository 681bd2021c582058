/**
 * Every routing outcome end to end (docs/design.md#collaboration-patterns): each pattern, the fallback
 * and the corner cases, asked through the HTTP API on the demo user and watched over SSE with a real
 * EventSource client. For every completed answer: `agents_used` is the set of agents that ran, no
 * number in the answer is missing from its Fact Sheet or its personal anchors (within tolerance or an
 * exemption), and no URL in it is one a tool did not return.
 */
import { Pool } from 'pg';
import { eventDataSchemas, type TurnEventType } from '../../contracts/event-data';
import { turnSchema, type Turn } from '../../contracts/turn';
import { factCheckReply } from '../../checks/fact-check';
import { citableNumbers } from '../../checks/personal-anchors';
import { defaultRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { api, expectSchema } from '../support/http';
import { startDemoService, startTestService, type DemoService, type TestService } from '../support/service';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';

jest.setTimeout(120_000);

let demo: DemoService;
let svc: TestService;
let user: { userId: string; apiKey: string };
let pool: Pool;

beforeAll(async () => {
  demo = await startDemoService();
  ({ svc, user, pool } = demo);
});
afterAll(async () => {
  await demo?.close();
});

interface Asked {
  turn: Turn;
  events: ReceivedEvent[];
}

/** POST the question, follow the turn over SSE until the server closes it, then GET the turn. */
async function ask(content: string): Promise<Asked> {
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }] },
  });
  expect(created.status).toBe(201);
  const stream = openEventStream(`${svc.url}/v1/turns/${created.body.id}/events`, { apiKey: user.apiKey });
  await stream.closedByServer;
  const fetched = await api(svc.url, 'GET', `/v1/turns/${created.body.id}`, { key: user.apiKey });
  const turn = expectSchema(turnSchema, fetched.body);
  expect(stream.events.map((e) => e.id)).toEqual(stream.events.map((_, i) => i + 1));
  for (const e of stream.events) expectSchema(eventDataSchemas[e.type as TurnEventType], e.data);
  return { turn, events: stream.events };
}

/** The invariant of every completed answer: its numbers trace to its Fact Sheet or anchors, its URLs to a tool. */
async function expectTrustworthy({ turn }: Asked, userMessage: string) {
  expect(turn.status).toBe('completed');
  const { answer } = turn.result!;
  const sheet = citableNumbers(turn.result!);
  const expertProse = await expertAnswers(turn.id);
  expect(factCheckReply(answer, sheet, userMessage, expertProse)).toEqual([]);
  const toolOutput = toolResultsText();
  // A sentence's closing punctuation is not part of the URL it ends on.
  const urls = (answer.match(/https?:\/\/[^\s<>\]]+/g) ?? []).map((url) => url.replace(/[.,;:!?)]+$/, ''));
  for (const url of urls) expect(toolOutput).toContain(url);
}

/** What the Domain Expert said this turn, as its agent.thought narration recorded it. */
async function expertAnswers(turnId: string): Promise<string> {
  const { rows } = await pool.query<{ data: { agent: string; delta: string } }>(
    `SELECT data FROM turn_events WHERE turn_id = $1 AND type = 'agent.thought' ORDER BY id`,
    [turnId],
  );
  return rows
    .filter((r) => r.data.agent === 'domain_expert')
    .map((r) => r.data.delta)
    .join('');
}

/** Every tool result the scripted model was sent (tool results travel in the request's messages). */
function toolResultsText(): string {
  return JSON.stringify(
    svc.scripted.requests
      .entries()
      .filter((r) => r.step === 'domain_expert')
      .map((r) => r.messages),
  );
}

const agentEvents = (events: ReceivedEvent[], type: 'agent.started' | 'agent.completed') =>
  events.filter((e) => e.type === type).map((e) => e.data.agent as string);

describe('the six collaboration patterns', () => {
  test('1. a health fact: the Domain Expert alone', async () => {
    const question = 'What is heart rate variability?';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['domain_expert']);
    expect(agentEvents(asked.events, 'agent.started')).toEqual(['domain_expert', 'synthesis', 'memory']);
  });

  test('2. my own time series: Data Science alone', async () => {
    const question = 'What is my average resting heart rate over the last 90 days?';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science']);
    expect(asked.turn.result!.fact_sheet.map((e) => e.claim)).toContain('ds-001.mean');
    // What the contract's example streams for a mean, as an EventSource receives it: sample_size and
    // bootstrap passed, then the Critic's verdict, before synthesis; and only then is it counted validated.
    const gate = (name: string) => asked.events.find((e) => e.type === 'validator.gate' && e.data.gate === name);
    const critic = asked.events.filter((e) => e.type === 'validator.critic');
    const synthesis = asked.events.find((e) => e.type === 'agent.started' && e.data.agent === 'synthesis')!;
    expect([gate('sample_size')?.data.verdict, gate('bootstrap')?.data.verdict]).toEqual(['passed', 'passed']);
    expect(critic.map((e) => e.data.verdict)).toEqual(['accept']);
    expect(gate('sample_size')!.id).toBeLessThan(gate('bootstrap')!.id);
    expect(gate('bootstrap')!.id).toBeLessThan(critic[0].id);
    expect(critic[0].id).toBeLessThan(synthesis.id);
    expect(asked.turn.result!.validator).toEqual({
      findings_total: 1,
      findings_validated: 1,
      findings_conditional: 0,
      findings_rejected: 0,
    });
  });

  test('3. my number and what it means: Data Science supports the Domain Expert (the forcing rule)', async () => {
    const question = 'Is an LDL of 124 something to worry about?';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science', 'domain_expert']);
    const started = agentEvents(asked.events, 'agent.started');
    expect(started.indexOf('domain_expert')).toBeGreaterThan(-1);
    // The Domain Expert is the main agent: it starts after the supporting Data Science agent completed.
    const dsCompleted = asked.events.find((e) => e.type === 'agent.completed' && e.data.agent === 'data_science')!;
    const deStarted = asked.events.find((e) => e.type === 'agent.started' && e.data.agent === 'domain_expert')!;
    expect(deStarted.id).toBeGreaterThan(dsCompleted.id);
  });

  test('4. coaching without data: the Health Coach alone, citing a personal anchor', async () => {
    const question = 'Can you give me some tips for building a morning routine?';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['health_coach']);
    expect(asked.turn.result!.personal_anchors!.length).toBeGreaterThan(0);
    expect(asked.turn.result!.fact_sheet).toEqual([]);
  });

  test('5. coaching on my data: Data Science supports the coach, validated before the coach speaks', async () => {
    const question = 'Help me plan better deep sleep based on my data';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science', 'health_coach']);
    const gateIds = asked.events.filter((e) => e.type === 'validator.gate').map((e) => e.id);
    const coachStarted = asked.events.find((e) => e.type === 'agent.started' && e.data.agent === 'health_coach')!;
    expect(gateIds.length).toBeGreaterThan(0);
    expect(Math.max(...gateIds)).toBeLessThan(coachStarted.id);
    // Validated once: one gate event per gate per finding.
    const perFinding = new Set(
      asked.events.filter((e) => e.type === 'validator.gate').map((e) => `${e.data.finding_id}:${e.data.gate}`),
    );
    expect(perFinding.size).toBe(gateIds.length);
    expect(asked.turn.result!.answer.trim().endsWith('?')).toBe(true);
  });

  test('6. coaching with data and medical context: Data Science and the Domain Expert in parallel, then the coach', async () => {
    const question = 'Help me improve my resting heart rate given my thyroid condition';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science', 'domain_expert', 'health_coach']);
    const at = (type: string, agent: string) => asked.events.find((e) => e.type === type && e.data.agent === agent)!;
    // Parallel: both supporting agents started before either completed, and their runs overlap in time.
    const supportingStarts = [at('agent.started', 'data_science'), at('agent.started', 'domain_expert')];
    const supportingEnds = [at('agent.completed', 'data_science'), at('agent.completed', 'domain_expert')];
    expect(Math.max(...supportingStarts.map((e) => e.id))).toBeLessThan(Math.min(...supportingEnds.map((e) => e.id)));
    const time = (e: ReceivedEvent) => Date.parse(e.data.at as string);
    expect(Math.max(...supportingStarts.map(time))).toBeLessThanOrEqual(Math.min(...supportingEnds.map(time)));
    // The coach runs after all of them.
    expect(at('agent.started', 'health_coach').id).toBeGreaterThan(Math.max(...supportingEnds.map((e) => e.id)));
  });
});

/** A fact sheet value within the fact-check's tolerance of `expected`. */
function expectSheetValue(turn: Turn, claim: string, expected: number) {
  const entry = turn.result!.fact_sheet.find((e) => e.claim === claim);
  expect({ claim, value: entry?.value }).toEqual({ claim, value: expect.any(Number) });
  expect(Math.abs(entry!.value - expected)).toBeLessThanOrEqual(Math.max(0.02 * Math.abs(expected), 0.05));
}

describe("people's own words: what routing understood is what Data Science computes", () => {
  test('a misspelt question with a "since" window: the mean over the days since that date, counted from the data', async () => {
    const question = 'whats my avrage deep slep since june';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science']);
    // Recomputed here from the rows: June 1 of the last date's year (or the year before) up to the last date.
    const { rows } = await pool.query<{ mean: number }>(
      `WITH last AS (SELECT max(date) AS d FROM daily_summaries WHERE user_id = $1),
            since AS (SELECT CASE WHEN make_date(extract(year FROM d)::int, 6, 1) <= d
                                  THEN make_date(extract(year FROM d)::int, 6, 1)
                                  ELSE make_date(extract(year FROM d)::int - 1, 6, 1) END AS d FROM last)
       SELECT avg(deep_sleep_minutes)::float8 AS mean FROM daily_summaries, since
       WHERE user_id = $1 AND date >= since.d`,
      [user.userId],
    );
    expectSheetValue(asked.turn, 'ds-001.mean', rows[0].mean);
  });

  test('weekends against weekdays: both means, from the rows', async () => {
    const question = 'Do I sleep longer on weekends than on weekdays?';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science']);
    const { rows } = await pool.query<{ weekend: number; weekday: number }>(
      `SELECT avg(sleep_minutes) FILTER (WHERE extract(isodow FROM date) >= 6)::float8 AS weekend,
              avg(sleep_minutes) FILTER (WHERE extract(isodow FROM date) < 6)::float8 AS weekday
       FROM daily_summaries WHERE user_id = $1`,
      [user.userId],
    );
    expectSheetValue(asked.turn, 'ds-001.weekend_mean', rows[0].weekend);
    expectSheetValue(asked.turn, 'ds-001.weekday_mean', rows[0].weekday);
  });

  test('a lab asked about without a value: its latest result computed and reproduced, the Domain Expert reads it against its range', async () => {
    const question = 'What was my most recent LDL and is it in range?';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science', 'domain_expert']);
    const { rows } = await pool.query<{ value: number }>(
      `SELECT value FROM lab_biomarkers WHERE user_id = $1 AND name = 'ldl_cholesterol' ORDER BY taken_on DESC LIMIT 1`,
      [user.userId],
    );
    // The value is Data Science's, from the labs table, reproduced; the Domain Expert places it in its band.
    expectSheetValue(asked.turn, 'ds-001.value', rows[0].value);
    expect(asked.turn.result!.answer).toContain(
      `Latest LDL cholesterol result over all available days (value ${rows[0].value} mg/dL)`,
    );
    expect(asked.turn.result!.answer).toMatch(/Your LDL cholesterol from the analysis above is \w+/);
  });
});

describe('reflection', () => {
  test('a YES runs one Data Science follow-up with no debug retries, and its finding joins validation', async () => {
    const question =
      'My resting heart rate is 70, is that something to worry about? Please double-check it against my data.';
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual(['data_science', 'domain_expert']);
    const findingIds = new Set(asked.events.filter((e) => e.type === 'validator.gate').map((e) => e.data.finding_id));
    expect([...findingIds].sort()).toEqual(['ds-001', 'dsr-001']);
    expect(asked.turn.result!.validator.findings_total).toBe(2);
  });

  test('no supporting agents, no reflection', async () => {
    const { turn } = await ask('What is my average steps over the last 30 days?');
    const { rows } = await pool.query<{ step: string }>('SELECT step FROM llm_calls WHERE turn_id = $1', [turn.id]);
    expect(rows.map((r) => r.step)).toContain('ds_plan');
    expect(rows.map((r) => r.step)).not.toContain('reflection');
  });
});

describe('the fallback and the corner cases', () => {
  test.each([
    ['thanks!', 'plain thanks'],
    ['What can you do?', 'questions about Amy herself'],
    ["My watch won't sync my sleep", 'device help'],
  ])('%s (%s) gets the conversational fallback: no agents, no validator', async (question) => {
    const asked = await ask(question);
    await expectTrustworthy(asked, question);
    expect(asked.turn.result!.agents_used).toEqual([]);
    expect(asked.turn.result!.fact_sheet).toEqual([]);
    expect(agentEvents(asked.events, 'agent.started')).toEqual(['synthesis', 'memory']);
  });
});

describe('a router that names a phantom agent', () => {
  let phantom: TestService;
  beforeAll(async () => {
    const garbageRoute: ScriptedRule = {
      step: 'route',
      respond: () => ({
        text: JSON.stringify({ main_agent: 'Nutrition Wizard', supporting_agents: 'ds; Sleep Oracle' }),
      }),
    };
    phantom = await startTestService({
      scripted: { rules: [garbageRoute, ...defaultRules.filter((rule) => rule.step !== 'route')] },
    });
  });
  afterAll(async () => {
    await phantom?.close();
  });

  test('gets the fallback reply: sanitiseRouting drops the unknown names, and no phantom agent runs', async () => {
    const someone = await phantom.createUser();
    const created = await api(phantom.url, 'POST', '/v1/turns', {
      key: someone.apiKey,
      body: { messages: [{ role: 'user', content: 'What should I eat before a run?' }], stream: false },
    });
    const turn = expectSchema(turnSchema, created.body);
    expect(turn.status).toBe('completed');
    expect(turn.result!.agents_used).toEqual([]);
    expect(phantom.scripted.requests.entries().map((r) => r.step)).toEqual([
      'classify_vagueness',
      'route',
      'fallback_reply',
      'memory',
    ]);
  });
});
