/**
 * Memory across turns (docs/design.md#memory, docs/design.md#step-8-memory): what a turn's extractor writes is
 * read into the next turn's agent prompts, unless the turn says `include_memory: false`; the extractor is
 * best-effort, so its failure never fails a turn. A hypothesis tested again is remembered beside its earlier
 * test, which is kept until the user deletes it; the next turn and the Investigator read the newest verdict.
 */
import { NO_WEB } from '../../dev/scripted-model/web-tools';
import { Pool } from 'pg';
import { memoryListSchema, testedHypothesisMetaSchema, type Memory } from '../../contracts/memory';
import { PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';
import { turnSchema, type Turn } from '../../contracts/turn';
import { Amy } from '@amy/sdk';
import type { HypothesesPromptInputs } from '../../activities/agents/investigator/prompt';
import { memoryExtract } from '../../dev/scripted-model/rules/memory-extract';
import type { ScriptedRequest } from '../../dev/scripted-model/types';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService, type TestService } from '../support/service';

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

async function ask(content: string, context?: { include_memory?: boolean }): Promise<Turn> {
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }], stream: false, ...(context ? { context } : {}) },
  });
  return expectSchema(turnSchema, res.body);
}

const memoryOf = async () =>
  (
    await pool.query<{ category: string; text: string; source_turn_id: string | null }>(
      `SELECT category, text, source_turn_id FROM memory_entries WHERE user_id = $1 ORDER BY created_at, id`,
      [user.userId],
    )
  ).rows;

const memorySummaryEvent = async (turnId: string) =>
  (
    await pool.query<{ data: { output_summary: string } }>(
      `SELECT data FROM turn_events WHERE turn_id = $1 AND type = 'agent.completed' AND data->>'agent' = 'memory'`,
      [turnId],
    )
  ).rows.map((r) => r.data.output_summary);

/** The system prompts the agents of the last turn were given (the log was cleared before it). */
const agentSystemPrompts = () =>
  svc.scripted.requests
    .entries()
    .filter((r) => ['ds_plan', 'domain_expert', 'health_coach.main', 'synthesis'].includes(r.step ?? ''))
    .map((r) => ({ step: r.step, system: r.system }));

const PREFERENCE = "I'm vegetarian and I only work out in the mornings.";

test('a fallback turn still remembers what the user said about themselves', async () => {
  const turn = await ask(`Thanks! ${PREFERENCE}`);
  expect(turn.status).toBe('completed');
  expect(await memoryOf()).toEqual([{ category: 'preference', text: PREFERENCE, source_turn_id: turn.id }]);
  expect(await memorySummaryEvent(turn.id)).toEqual(['+1 entry (1 preference)']);
});

test('the extractor sees what memory holds and does not write it again; with include_memory false it sees nothing', async () => {
  const extractorPrompt = () =>
    JSON.stringify(
      svc.scripted.requests
        .entries()
        .filter((r) => r.step === 'memory')
        .at(-1)?.messages,
    );
  svc.scripted.requests.clear();
  const again = await ask(`Thanks again! ${PREFERENCE}`);
  expect(again.status).toBe('completed');
  expect(extractorPrompt()).toContain('ALREADY REMEMBERED');
  expect((await memoryOf()).filter((m) => m.source_turn_id === again.id)).toEqual([]);

  svc.scripted.requests.clear();
  await ask('Thanks! I want to swim twice a week.', { include_memory: false });
  expect(extractorPrompt()).not.toContain('ALREADY REMEMBERED');
  expect(extractorPrompt()).not.toContain('vegetarian');
});

test('the next turn’s agents see it in their system prompts, with the tested hypotheses of earlier turns', async () => {
  svc.scripted.requests.clear();
  const turn = await ask('Help me plan better deep sleep based on my data. I want to get more deep sleep.');
  expect(turn.status).toBe('completed');
  const prompts = agentSystemPrompts();
  expect(prompts.map((p) => p.step)).toEqual(expect.arrayContaining(['ds_plan', 'health_coach.main', 'synthesis']));
  for (const { system } of prompts) expect(system).toContain(PREFERENCE);

  const written = (await memoryOf()).filter((m) => m.source_turn_id === turn.id);
  expect(written.map((m) => m.category).sort()).toEqual(['goal', 'tested_hypothesis']);
  expect(await memorySummaryEvent(turn.id)).toEqual(['+2 entries (1 goal, 1 tested_hypothesis)']);

  svc.scripted.requests.clear();
  await ask('What is my average steps over the last 30 days?');
  const [plan] = agentSystemPrompts();
  expect(plan.system).toMatch(
    /## Tested hypotheses[\s\S]*\[validated\] Average deep sleep minutes over the last 30 days/,
  );
  expect(plan.system).toContain('I want to get more deep sleep.');
});

test('the documented recipe: GET /v1/memory?after=<the turn’s completed_at> lists what the turn wrote', async () => {
  const turn = await ask('Help me get more REM sleep based on my data. I want to be in bed by 10.');
  expect(turn.status).toBe('completed');
  const written = (await memoryOf()).filter((m) => m.source_turn_id === turn.id);
  expect(written.length).toBeGreaterThan(0);

  const after = encodeURIComponent(turn.completed_at!);
  const res = await api(svc.url, 'GET', `/v1/memory?after=${after}&include=tested_hypothesis`, { key: user.apiKey });
  expect(res.status).toBe(200);
  const listed = expectSchema(memoryListSchema, res.body).data;
  expect(listed.map((m) => m.source_turn_id)).toEqual(written.map(() => turn.id));
  expect(listed.map((m) => m.text).sort()).toEqual(written.map((m) => m.text).sort());
});

test('include_memory: false keeps memory out of every prompt', async () => {
  svc.scripted.requests.clear();
  const turn = await ask('Help me plan better deep sleep based on my data', { include_memory: false });
  expect(turn.status).toBe('completed');
  const prompts = agentSystemPrompts();
  expect(prompts.length).toBeGreaterThan(0);
  for (const { system } of prompts) {
    expect(system).not.toContain('vegetarian');
    expect(system).not.toContain('WHAT YOU REMEMBER');
  }
});

test('a failing extractor never fails the turn', async () => {
  svc.scripted.faults.inject({ kind: 'malformed', step: 'memory', times: 10 });
  const turn = await ask('Thanks! I want to walk more.');
  expect(turn.status).toBe('completed');
  expect((await memoryOf()).filter((m) => m.source_turn_id === turn.id)).toEqual([]);
  expect(await memorySummaryEvent(turn.id)).toEqual(['+0 entries']);
  svc.scripted.faults.clear();
});

test('a token pasted into a turn is never remembered, though the extractor copied it; the trace says so without it', async () => {
  const token =
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIiwic2NvcGUiOiJzbGVlcCJ9.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const goal = 'I want to sleep eight hours a night.';
  svc.scripted.requests.clear();
  const turn = await ask(`Thanks! Remember my Withings access token: ${token}. ${goal}`);
  expect(turn.status).toBe('completed');

  // The extractor was told never to remember a credential, even one the user asks it to keep…
  const extraction = svc.scripted.requests.entries().find((r) => r.step === 'memory')!;
  expect(extraction.system).toMatch(/Never remember a secret: no password, PIN, API key, access token/);
  expect(extraction.system).toMatch(/even when the user pasted it or asks you to keep it/);
  // …but, a careless model here, it did emit the token as an entry of its own…
  const emitted = memoryExtract.respond({
    step: 'memory',
    inputs: extraction.inputs as ScriptedRequest<'memory'>['inputs'],
    model: extraction.model,
    messages: extraction.messages,
    tools: [],
    web: NO_WEB,
  });
  expect('text' in emitted && emitted.text).toContain(token);
  // …and what reached memory is the goal alone: the token is in no entry, and the memory agent says one was left out.
  expect((await memoryOf()).filter((m) => m.source_turn_id === turn.id)).toEqual([
    { category: 'goal', text: goal, source_turn_id: turn.id },
  ]);
  const { rows } = await pool.query('SELECT 1 FROM memory_entries WHERE text LIKE $1 OR meta::text LIKE $1', [
    `%${token.slice(0, 24)}%`,
  ]);
  expect(rows).toEqual([]);
  expect(await memorySummaryEvent(turn.id)).toEqual(['+1 entry (1 goal); 1 not remembered: it looked like a secret']);
});

test('include_biomarkers: false keeps the lab snapshot away from the Domain Expert', async () => {
  const toolResults = () =>
    JSON.stringify(
      svc.scripted.requests
        .entries()
        .filter((r) => r.step === 'domain_expert')
        .map((r) => r.messages),
    );
  svc.scripted.requests.clear();
  expect((await ask('Is an LDL of 124 something to worry about?')).status).toBe('completed');
  expect(toolResults()).toContain('ldl_cholesterol');

  svc.scripted.requests.clear();
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: {
      messages: [{ role: 'user', content: 'Is an LDL of 124 something to worry about?' }],
      stream: false,
      context: { include_biomarkers: false },
    },
  });
  expect(expectSchema(turnSchema, res.body).status).toBe('completed');
  expect(toolResults()).toContain('lab results withheld');
  expect(toolResults()).not.toContain('"latest_biomarkers":[{');
});

describe('what validation teaches is remembered as an insight; a re-test is remembered beside it, and read as the newest', () => {
  const planted = PLANTED_EFFECTS.find((e) => e.kind === 'association')!;
  const question = `Are my ${planted.feature.replace(/_/g, ' ')} related to my ${planted.target!.replace(/_/g, ' ')}?`;
  const listed = async (query: string): Promise<Memory[]> => {
    const res = await api(svc.url, 'GET', `/v1/memory${query}`, { key: user.apiKey });
    expect(res.status).toBe(200);
    return expectSchema(memoryListSchema, res.body).data;
  };
  let first: Turn;
  let again: Turn;
  let insight: Memory;
  let claim: string;

  test('a validated association becomes an insight with { finding_id, feature, target, verdict, effect }', async () => {
    first = await ask(question);
    expect(first.status).toBe('completed');
    expect(first.result!.validator).toMatchObject({ findings_total: 1, findings_validated: 1 });
    const rho = first.result!.fact_sheet.find((e) => e.claim === 'ds-001.rho')!.value;

    const insights = (await listed('?category=insight')).filter((m) => m.source_turn_id === first.id);
    expect(insights).toHaveLength(1);
    insight = insights[0];
    expect(insight.text).toMatch(/\(validated, effect -?\d/);
    expect(testedHypothesisMetaSchema.parse(insight.meta)).toEqual({
      finding_id: 'ds-001',
      feature: planted.feature,
      target: planted.target,
      verdict: 'validated',
      effect: expect.closeTo(rho, 10),
    });
    expect(await memorySummaryEvent(first.id)).toEqual(['+2 entries (1 insight, 1 tested_hypothesis)']);
  });

  /**
   * The user's tracker lost the target's stage on most nights: they send their days again (a day sent again is
   * replaced whole) with it on one day in 25, too few pairs for an association to pass its sample-size gate.
   */
  async function thinOutTarget() {
    const res = await api(svc.url, 'GET', '/v1/data/daily?limit=1000', { key: user.apiKey });
    expect(res.status).toBe(200);
    const rows = (res.body as { data: Array<Record<string, unknown>> }).data.map((row, i) =>
      i % 25 === 0 ? row : { ...row, [planted.target!]: null },
    );
    const sent = await api(svc.url, 'POST', '/v1/data/daily', { key: user.apiKey, body: { rows } });
    expect(sent.status).toBe(200);
  }

  test('asked again once the data says otherwise: the first test is kept as it was, the re-test beside it', async () => {
    const before = (await listed('?include=tested_hypothesis&limit=100')).filter((m) => m.source_turn_id === first.id);
    expect(before.map((m) => m.category).sort()).toEqual(['insight', 'tested_hypothesis']);
    claim = before.find((m) => m.category === 'tested_hypothesis')!.text;

    await thinOutTarget();
    again = await ask(question);
    expect(again.status).toBe('completed');
    expect(again.result!.validator).toMatchObject({ findings_total: 1, findings_validated: 0 });

    const all = await listed('?include=tested_hypothesis&limit=100');
    expect(all.filter((m) => m.source_turn_id === first.id)).toEqual(before);
    const now = all.filter((m) => m.source_turn_id === again.id);
    expect(now).toEqual([
      expect.objectContaining({ category: 'tested_hypothesis', text: claim, meta: expect.anything() }),
    ]);
    expect(testedHypothesisMetaSchema.parse(now[0].meta).verdict).not.toBe('validated');

    // The SDK's list, page after page, holds both tests too.
    const amy = new Amy({ apiKey: user.apiKey, baseUrl: svc.url });
    const viaSdk: Memory[] = [];
    for await (const entry of amy.memory.list({ include: 'tested_hypothesis', limit: 2 })) viaSdk.push(entry);
    expect(viaSdk.map((m) => m.id)).toEqual(expect.arrayContaining([...before, ...now].map((m) => m.id)));

    // A client that synced up to the first test finds the re-test with ?after=, and lost nothing it held.
    const after = encodeURIComponent(before.map((m) => m.created_at).sort()[before.length - 1]);
    const synced = await listed(`?after=${after}&include=tested_hypothesis&limit=100`);
    expect(synced.map((m) => m.id)).toEqual(now.map((m) => m.id));
  });

  test('the next turn reads the newest verdict only: not the earlier one, nor the insight it had become', async () => {
    const newest = testedHypothesisMetaSchema.parse(
      (await listed('?include=tested_hypothesis&limit=100')).find((m) => m.source_turn_id === again.id)!.meta,
    ).verdict;
    svc.scripted.requests.clear();
    expect((await ask('What is my average steps over the last 30 days?')).status).toBe('completed');
    const [plan] = agentSystemPrompts();
    const lines = plan.system.split('\n').filter((line) => line.includes(claim));
    expect(lines).toEqual([expect.stringContaining(`[${newest}] ${claim}`)]);
    expect(plan.system).not.toContain(insight.text);
  });

  test('the Investigator reads the newest verdict only', async () => {
    svc.scripted.requests.clear();
    expect((await ask('Is anything interesting in my data?')).status).toBe('completed');
    const proposer = svc.scripted.requests.entries().find((r) => r.step === 'investigator_hypotheses')!;
    const tested = (proposer.inputs as HypothesesPromptInputs).tested.filter(
      (h) => h.feature === planted.feature && h.target === planted.target,
    );
    expect(tested).toEqual([expect.objectContaining({ claim, verdict: expect.not.stringMatching(/^validated$/) })]);
  });
});
