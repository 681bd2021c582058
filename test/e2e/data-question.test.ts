/**
 * Collaboration pattern 2 end to end: a question about the user's own data runs route →
 * rephrase → Data Science (plan, code, sandbox, debug, summary, findings) → reproduction, the seven gates,
 * the Critic and (for an inference) the Assessment → synthesis constrained to the Fact Sheet → fact-check →
 * memory, on the real service: Temporal, Postgres, the sandbox, the Python gates and the scripted model.
 */
import { Pool } from 'pg';
import { eventDataSchemas, type TurnEvent, type TurnEventType } from '../../contracts/event-data';
import { GATE_NAMES } from '../../contracts/findings';
import { turnSchema, type Turn } from '../../contracts/turn';
import { factCheckReply } from '../../checks/fact-check';
import type { FactSheet } from '../../checks/fact-sheet';
import { createEventLog } from '../../platform/event-log';
import { INDEPENDENT_PAIR, PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';
import { scriptedRules } from '../../dev/scripted-model/rules';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(120_000);

type Asker = DemoService;

const startAsker = (
  brokenCode: 'never' | 'first' | 'always' = 'never',
  wrongResult: 'none' | 'number' | 'window' = 'none',
): Promise<Asker> => startDemoService({ scripted: { rules: scriptedRules({ brokenCode, wrongResult }) } });

async function stopAsker(asker: Asker | undefined) {
  await asker?.close();
}

/** Asks, waits for the workflow to finish, and returns the turn as GET /v1/turns/:id shows it, with its events. */
async function ask({ svc, pool, user }: Asker, content: string): Promise<{ turn: Turn; events: TurnEvent[] }> {
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

const ofType = (events: TurnEvent[], type: TurnEventType) => events.filter((e) => e.type === type);
const sheetOf = (turn: Turn): FactSheet => Object.fromEntries(turn.result!.fact_sheet.map((e) => [e.claim, e.value]));

async function ledgerSteps(pool: Pool, turnId: string): Promise<string[]> {
  const { rows } = await pool.query<{ step: string }>('SELECT step FROM llm_calls WHERE turn_id = $1 ORDER BY id', [
    turnId,
  ]);
  return rows.map((r) => r.step);
}

describe('a descriptive question about the user’s own data', () => {
  let asker: Asker;
  let turn: Turn;
  let events: TurnEvent[];
  beforeAll(async () => {
    asker = await startAsker();
    ({ turn, events } = await ask(asker, 'What is my average resting heart rate over the last 90 days?'));
  });
  afterAll(() => stopAsker(asker));

  test('completes with the Data Science agent and one validated finding', () => {
    expect(turn.status).toBe('completed');
    expect(turn.result!.agents_used).toEqual(['data_science']);
    expect(turn.result!.validator).toEqual({
      findings_total: 1,
      findings_validated: 1,
      findings_conditional: 0,
      findings_rejected: 0,
    });
  });

  test('the fact-sheet mean equals the same statistic computed independently from the rows in Postgres', async () => {
    const { rows } = await asker.pool.query<{ mean: number; n: number }>(
      `SELECT avg(resting_heart_rate)::float8 AS mean, count(resting_heart_rate)::int AS n
         FROM daily_summaries
        WHERE user_id = $1
          AND date > (SELECT max(date) FROM daily_summaries WHERE user_id = $1) - 90`,
      [asker.user.userId],
    );
    const mean = turn.result!.fact_sheet.find((e) => e.claim === 'ds-001.mean');
    expect(mean).toMatchObject({ unit: 'bpm', source: 'data_science', n: rows[0].n, window: 'the last 90 days' });
    expect(mean!.value).toBeCloseTo(rows[0].mean, 9);
    expect(sheetOf(turn)['ds-001.n']).toBe(rows[0].n);
  });

  test('every number in the answer is in the fact sheet within tolerance, and the fact_check event agrees', () => {
    const answer = turn.result!.answer;
    const sheet = sheetOf(turn);
    expect(answer).toContain(`mean ${Number(sheet['ds-001.mean'].toFixed(2))} bpm`);
    expect(
      factCheckReply(answer, sheetOf(turn), 'What is my average resting heart rate over the last 90 days?'),
    ).toEqual([]);
    expect(ofType(events, 'fact_check').map((e) => e.data)).toEqual([expect.objectContaining({ issues: [] })]);
  });

  test('the agents narrate: Data Science with the rephrased question, then synthesis, then memory', () => {
    const started = ofType(events, 'agent.started').map((e) => e.data);
    expect(started.map((d) => d.agent)).toEqual(['data_science', 'synthesis', 'memory']);
    expect(started[0].question).toBe('Compute the mean of resting_heart_rate over the last 90 days.');
    const completed = ofType(events, 'agent.completed').map((e) => e.data);
    expect(completed.map((d) => d.agent)).toEqual(['data_science', 'synthesis', 'memory']);
    expect(completed[0].cost_usd).toBeGreaterThan(0);
    expect(completed[2].output_summary).toBe('+1 entry (1 tested_hypothesis)');
    const thoughts = ofType(events, 'agent.thought').filter((e) => e.data.agent === 'data_science');
    expect(thoughts.map((e) => e.data.delta).join('')).toMatch(/== Approach ==[\s\S]*\[analysis ran in \d+ ms\]/);
  });

  test('a description streams the contract’s gates, sample_size then bootstrap, with its reproduction, then the Critic’s verdict', async () => {
    const { rows } = await asker.pool.query<{ n: number }>(
      `SELECT count(resting_heart_rate)::int AS n FROM daily_summaries
        WHERE user_id = $1 AND date > (SELECT max(date) FROM daily_summaries WHERE user_id = $1) - 90`,
      [asker.user.userId],
    );
    const sheet = sheetOf(turn);
    const gateEvents = ofType(events, 'validator.gate');
    const gates = Object.fromEntries(gateEvents.map((e) => [e.data.gate as string, e]));
    // Reproduction first, then the seven in their order; those that do not apply to a mean say so.
    expect(gateEvents.map((e) => e.data.gate)).toEqual(GATE_NAMES);
    expect(gates.reproduction.data).toMatchObject({
      finding_id: 'ds-001',
      verdict: 'passed',
      detail: {
        statistic: 'mean',
        numbers: expect.arrayContaining([
          { key: 'mean', claimed: sheet['ds-001.mean'], recomputed: expect.any(Number), reproduced: true },
        ]),
      },
    });
    expect(gates.sample_size.data).toMatchObject({
      finding_id: 'ds-001',
      verdict: 'passed',
      detail: { n: rows[0].n, min_required: 10 },
    });
    const bootstrap = gates.bootstrap.data.detail as { statistic: string; ci_low: number; ci_high: number };
    expect(gates.bootstrap.data.verdict).toBe('passed');
    expect(bootstrap.statistic).toBe('mean');
    expect(bootstrap.ci_low).toBeLessThan(sheet['ds-001.mean']);
    expect(bootstrap.ci_high).toBeGreaterThan(sheet['ds-001.mean']);
    const notApplicable = gateEvents.filter(
      (e) => !['reproduction', 'sample_size', 'bootstrap'].includes(e.data.gate as string),
    );
    expect(notApplicable.map((e) => e.data.verdict)).toEqual(notApplicable.map(() => 'skipped'));

    // The Critic's verdict after every gate, and before synthesis begins: the contract's order.
    const [critic] = ofType(events, 'validator.critic');
    expect(critic.data).toMatchObject({ finding_id: 'ds-001', verdict: 'accept', concerns: [] });
    expect(critic.data.reasoning).toContain('not a causal claim');
    const synthesisStarted = ofType(events, 'agent.started').find((e) => e.data.agent === 'synthesis')!;
    expect(gates.sample_size.id).toBeLessThan(gates.bootstrap.id);
    expect(Math.max(...gateEvents.map((e) => e.id))).toBeLessThan(critic.id);
    expect(critic.id).toBeLessThan(synthesisStarted.id);
  });

  test('the descriptive ask skipped the model extraction and the Assessment; cost_usd is the ledger sum', async () => {
    const steps = await ledgerSteps(asker.pool, turn.id);
    expect(steps).toEqual(
      expect.arrayContaining([
        'classify_vagueness',
        'route',
        'rephrase',
        'ds_plan',
        'ds_code',
        'ds_summary',
        'synthesis',
      ]),
    );
    expect(steps).not.toContain('ds_extract');
    expect(steps).not.toContain('ds_debug');
    // The Critic reviews the description; a level has no mechanism or strategy for the Assessment to give.
    expect(steps.filter((step) => step === 'critic')).toHaveLength(1);
    expect(steps).not.toContain('assessment');
    const { rows } = await asker.pool.query<{ sum: number }>(
      'SELECT sum(cost_usd)::float8 AS sum FROM llm_calls WHERE turn_id = $1',
      [turn.id],
    );
    expect(turn.result!.cost_usd).toBeCloseTo(rows[0].sum, 9);
  });

  test('memory keeps the tested hypothesis with its verdict', async () => {
    const { rows } = await asker.pool.query(
      `SELECT category, confidence, source_turn_id, meta FROM memory_entries WHERE user_id = $1`,
      [asker.user.userId],
    );
    expect(rows).toEqual([
      {
        category: 'tested_hypothesis',
        confidence: 0.9,
        source_turn_id: turn.id,
        meta: {
          finding_id: 'ds-001',
          feature: 'resting_heart_rate',
          target: null,
          verdict: 'validated',
          effect: null,
          tested: 'scalar|resting_heart_rate|-|the last 90 days',
        },
      },
    ]);
  });
});

describe('correlations are judged by the gates on the user’s own series', () => {
  let asker: Asker;
  beforeAll(async () => {
    asker = await startAsker();
  });
  afterAll(() => stopAsker(asker));

  const readable = (column: string) => column.replace(/_/g, ' ');

  test(`a planted strong association (${PLANTED_EFFECTS[0].feature} ~ ${PLANTED_EFFECTS[0].target}) is validated`, async () => {
    const planted = PLANTED_EFFECTS[0];
    const { turn, events } = await ask(
      asker,
      `Are my ${readable(planted.feature)} related to my ${readable(planted.target!)}?`,
    );
    expect(turn.status).toBe('completed');
    expect(turn.result!.validator).toMatchObject({ findings_total: 1, findings_validated: 1 });
    const rho = sheetOf(turn)['ds-001.rho'];
    expect(Math.sign(rho)).toBe(planted.expected_sign);
    const gates = ofType(events, 'validator.gate').map((e) => e.data);
    // An inference: its rho reproduced first, then the seven gates judged it.
    expect(gates.map((g) => g.gate)).toEqual(GATE_NAMES);
    expect(gates[0]).toMatchObject({ verdict: 'passed' });
    expect(gates.find((g) => g.gate === 'bootstrap')).toMatchObject({ verdict: 'passed' });
    expect(await ledgerSteps(asker.pool, turn.id)).toContain('ds_extract');
  });

  test(`an association between independent series (${INDEPENDENT_PAIR.feature} ~ ${INDEPENDENT_PAIR.target}) is not validated, and its number stays out of the answer`, async () => {
    const { turn } = await ask(
      asker,
      `Is my ${readable(INDEPENDENT_PAIR.feature)} related to my ${readable(INDEPENDENT_PAIR.target)}?`,
    );
    expect(turn.status).toBe('completed');
    const { validator, fact_sheet } = turn.result!;
    expect(validator.findings_total).toBe(1);
    expect(validator.findings_validated).toBe(0);
    if (validator.findings_rejected === 1) expect(fact_sheet).toEqual([]);
    else expect(fact_sheet.every((e) => e.verdict === 'conditional')).toBe(true);
  });

  test('a trend goes through the model extraction, with numbers traced to the analysis result', async () => {
    const { turn } = await ask(asker, 'Has my resting heart rate changed over the last 30 days?');
    expect(turn.status).toBe('completed');
    const sheet = sheetOf(turn);
    expect(Object.keys(sheet).sort()).toEqual([
      'ds-001.effect',
      'ds-001.prior_mean',
      'ds-001.recent_mean',
      'ds-001.window_days',
    ]);
    expect(sheet['ds-001.effect']).toBeCloseTo(sheet['ds-001.recent_mean'] - sheet['ds-001.prior_mean'], 9);
    expect(sheet['ds-001.effect']).toBeLessThan(0); // the planted training effect
  });
});

describe('a description of fewer than ten days is not validated', () => {
  let asker: Asker;
  beforeAll(async () => {
    asker = await startAsker();
  });
  afterAll(() => stopAsker(asker));

  test('"How did I sleep last week?": its seven nights fail the sample size, the Critic rejects it, and its mean stays out of the answer', async () => {
    const { turn, events } = await ask(asker, 'How did I sleep last week?');
    expect(turn.status).toBe('completed');
    expect(turn.result!.validator).toEqual({
      findings_total: 1,
      findings_validated: 0,
      findings_conditional: 0,
      findings_rejected: 1,
    });
    const { rows } = await asker.pool.query<{ mean: number; n: number }>(
      `SELECT avg(sleep_minutes)::float8 AS mean, count(sleep_minutes)::int AS n FROM daily_summaries
        WHERE user_id = $1 AND date > (SELECT max(date) FROM daily_summaries WHERE user_id = $1) - 7`,
      [asker.user.userId],
    );
    expect(rows[0].n).toBeLessThan(10);
    // Reproduced, then rejected by the hard sample_size gate: the gates after it do not run.
    const gates = ofType(events, 'validator.gate').map((e) => e.data);
    expect(gates.map((g) => [g.gate, g.verdict])).toEqual([
      ['reproduction', 'passed'],
      ['sample_size', 'failed'],
    ]);
    expect(gates[1].detail).toMatchObject({ n: rows[0].n, min_required: 10 });
    const [critic] = ofType(events, 'validator.critic').map((e) => e.data);
    expect(critic).toMatchObject({ finding_id: 'ds-001', verdict: 'reject' });
    expect(critic.concerns).toEqual([expect.objectContaining({ category: 'small_n', severity: 'high' })]);
    expect(turn.result!.fact_sheet.filter((e) => e.claim.startsWith('ds-001.'))).toEqual([]);
    expect(turn.result!.answer).not.toContain(String(Number(rows[0].mean.toFixed(2))));
  });
});

describe('reproduction: a number our own code does not recompute from the rows rejects its finding', () => {
  let wrongNumber: Asker;
  let wrongWindow: Asker;
  beforeAll(async () => {
    [wrongNumber, wrongWindow] = await Promise.all([startAsker('never', 'number'), startAsker('never', 'window')]);
  });
  afterAll(async () => {
    await Promise.all([stopAsker(wrongNumber), stopAsker(wrongWindow)]);
  });

  /** The turn completed with every finding rejected by reproduction alone, and no number of theirs in the answer. */
  function expectCaught(turn: Turn, events: TurnEvent[]) {
    expect(turn.status).toBe('completed');
    const { validator, fact_sheet } = turn.result!;
    expect(validator.findings_total).toBeGreaterThan(0);
    expect(validator.findings_rejected).toBe(validator.findings_total);
    expect(fact_sheet).toEqual([]);
    const gates = ofType(events, 'validator.gate').map((e) => e.data);
    expect(gates.map((g) => [g.gate, g.verdict])).toEqual(gates.map(() => ['reproduction', 'failed']));
    const numbers = gates.flatMap((g) => (g.detail as { numbers: Array<{ reproduced: boolean }> }).numbers);
    expect(numbers.some((n) => !n.reproduced)).toBe(true);
  }

  test.each([
    ['a description', 'What is my average resting heart rate over the last 90 days?'],
    ['a trend', 'Has my resting heart rate changed over the last 30 days?'],
    ['an association', 'Are my active zone minutes related to my deep sleep minutes?'],
    ['a weekend comparison', 'Do I sleep longer on weekends than on weekdays?'],
  ])('code that returns a wrong number is caught: %s', async (_kind, question) => {
    const { turn, events } = await ask(wrongNumber, question);
    expectCaught(turn, events);
  });

  test('code that computes over another window than the plan is caught', async () => {
    const { turn, events } = await ask(wrongWindow, 'What is my total step count over the last 30 days?');
    expectCaught(turn, events);
    const [gate] = ofType(events, 'validator.gate').map((e) => e.data);
    expect((gate.detail as { numbers: Array<{ key: string; reproduced: boolean }> }).numbers).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: 'total', reproduced: false })]),
    );
  });
});

describe('a user with no data', () => {
  let asker: Asker;
  beforeAll(async () => {
    asker = await startAsker();
    asker.user = await asker.svc.createUser();
  });
  afterAll(() => stopAsker(asker));

  test('gets the no-data reply, with no numbers: nothing is computed or validated over an empty snapshot', async () => {
    const { turn, events } = await ask(asker, 'What is my average resting heart rate over the last 90 days?');
    expect(turn.status).toBe('completed');
    expect(turn.result!.fact_sheet).toEqual([]);
    expect(turn.result!.validator).toMatchObject({ findings_total: 0, findings_rejected: 0 });
    expect(ofType(events, 'validator.gate')).toEqual([]);
    expect(turn.result!.answer).toMatch(/haven't uploaded any health data[\s\S]*POST \/v1\/data\/daily/);
    expect(factCheckReply(turn.result!.answer, {}, '')).toEqual([]);
    // The run refused the empty snapshot: no code was written or debugged for it.
    const steps = await ledgerSteps(asker.pool, turn.id);
    expect(steps.filter((s) => s.startsWith('ds_'))).toEqual([]);
  });
});

describe('the debug loop', () => {
  test('code that fails first is repaired with the error in hand, and the answer is still right', async () => {
    const asker = await startAsker('first');
    try {
      const { turn, events } = await ask(asker, 'What is my average resting heart rate over the last 90 days?');
      expect(turn.status).toBe('completed');
      const steps = await ledgerSteps(asker.pool, turn.id);
      expect(steps.filter((s) => s === 'ds_debug')).toHaveLength(1);
      const debugPrompt = asker.svc.scripted.requests.entries().find((r) => r.step === 'ds_debug');
      expect(JSON.stringify(debugPrompt)).toContain('resting_heart_rate_daily');
      const narration = ofType(events, 'agent.thought')
        .filter((e) => e.data.agent === 'data_science')
        .map((e) => e.data.delta)
        .join('');
      expect(narration).toMatch(/\[analysis failed \(exception\): KeyError[\s\S]*\[analysis ran in/);
      expect(turn.result!.validator.findings_validated).toBe(1);
    } finally {
      await asker.close();
    }
  });

  test('code that never runs ends in the DS-failed state: an honest answer with no numbers, not a failed turn', async () => {
    const asker = await startAsker('always');
    try {
      const { turn, events } = await ask(asker, 'What is my average resting heart rate over the last 90 days?');
      expect(turn.status).toBe('completed');
      const steps = await ledgerSteps(asker.pool, turn.id);
      expect(steps.filter((s) => s === 'ds_debug')).toHaveLength(2);
      expect(steps).not.toContain('ds_summary');
      expect(turn.result!.fact_sheet).toEqual([]);
      expect(turn.result!.validator.findings_total).toBe(0);
      expect(turn.result!.agents_used).toEqual(['data_science']);
      const synthesisPrompt = asker.svc.scripted.requests.entries().find((r) => r.step === 'synthesis');
      expect(JSON.stringify(synthesisPrompt)).toContain('DATA SCIENCE STATUS: FAILED');
      expect(turn.result!.answer).toMatch(/couldn't complete the analysis/);
      const dsCompleted = ofType(events, 'agent.completed').find((e) => e.data.agent === 'data_science');
      expect(dsCompleted?.data.output_summary).toMatch(/^Analysis failed: /);
    } finally {
      await asker.close();
    }
  });
});
