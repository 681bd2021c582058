/**
 * The Health Coach (docs/design.md#health-coach): the personal anchors are computed exactly as
 * documented, and the one activity running the three modules does what the coach's hard rules say —
 * through the real LLM layer, the scripted model and Postgres, inside Temporal's activity context:
 * the gate's verdict sets the coaching prompt (malformed → NOREC), the reply cites an anchor (one more
 * call, then a deterministic sentence, when it does not), rejected findings never reach a prompt,
 * FINISH appends a closing summary, and the coach narrates under `health_coach`.
 */
import { NO_WEB } from '../../dev/scripted-model/web-tools';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { Finding } from '../../contracts/findings';
import type { Message } from '../../contracts/turn';
import {
  anchorSentence,
  citedAnchorKeys,
  computeAnchors,
  createCoachUser,
  parseFinishDecision,
  parseRecommendVerdict,
  type CoachFinding,
  type CoachUserInput,
  type CoachUserOutput,
  type PersonalAnchor,
} from '../../activities/agents/health-coach';
import { DAILY_METRICS, type DailyRow } from '../../contracts/health-records';
import { readUserHealthData } from '../../platform/health-data/store';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import {
  healthCoachFinish,
  healthCoachGate,
  healthCoachRules,
  healthCoachSummary,
} from '../../dev/scripted-model/rules/health-coach';
import type { ScriptedRequest, ScriptedRule } from '../../dev/scripted-model/types';
import { startStepHarness, type StepHarness } from '../support/step-harness';

// ---------------------------------------------------------------------------------------------------
// computeAnchors

const DAY_MS = 86_400_000;
const END = '2025-03-28';

/** Rows for the `count` days ending at END, oldest first; `values(daysBeforeEnd)` fills the metrics. */
function rows(count: number, values: (daysBeforeEnd: number) => Partial<DailyRow>): DailyRow[] {
  const empty = Object.fromEntries(DAILY_METRICS.map((m) => [m, null])) as Record<(typeof DAILY_METRICS)[number], null>;
  return Array.from({ length: count }, (_, i) => {
    const daysBeforeEnd = count - 1 - i;
    const date = new Date(Date.parse(`${END}T00:00:00Z`) - daysBeforeEnd * DAY_MS).toISOString().slice(0, 10);
    return { ...empty, date, ...values(daysBeforeEnd) };
  });
}

const byKey = (anchors: PersonalAnchor[]) => Object.fromEntries(anchors.map((a) => [a.key, a]));

describe('computeAnchors', () => {
  test('the 14-day mean and its change against the 14 days before, with unit, n and window', () => {
    // Recent 14 days: 400 and 420 alternating (mean 410); prior 14: 380 → change +30.
    const anchors = computeAnchors(
      rows(28, (d) => ({ sleep_minutes: d < 14 ? (d % 2 === 0 ? 400 : 420) : 380, resting_heart_rate: 60 })),
    );
    expect(byKey(anchors).sleep_minutes_mean_14d).toEqual({
      key: 'sleep_minutes_mean_14d',
      label: 'average nightly sleep',
      value: 410,
      unit: 'min',
      n: 14,
      window: '14 days to 2025-03-28',
    });
    expect(byKey(anchors).sleep_minutes_change_14d).toEqual({
      key: 'sleep_minutes_change_14d',
      label: 'change in average nightly sleep, recent minus prior',
      value: 30,
      unit: 'min',
      n: 28,
      window: '14 days to 2025-03-28 vs the 14 days before',
    });
    expect(byKey(anchors).resting_heart_rate_mean_14d).toMatchObject({ value: 60, unit: 'bpm' });
    expect(byKey(anchors).resting_heart_rate_change_14d).toMatchObject({ value: 0 });
  });

  test('one decimal, once: a change is the difference of the unrounded means', () => {
    // Recent mean 60.04 (→ 60), prior 62.06 (→ 62.1): the change is -2.02 → -2, not 60 - 62.1 = -2.1.
    const anchors = computeAnchors(
      rows(28, (d) => ({
        resting_heart_rate: d < 14 ? (d === 0 ? 60.56 : 60) : d === 14 ? 62.84 : 62,
      })),
    );
    expect(byKey(anchors).resting_heart_rate_mean_14d.value).toBe(60);
    expect(byKey(anchors).resting_heart_rate_change_14d.value).toBe(-2);
  });

  test('missing days count in neither the mean nor n', () => {
    // Recent window: 10 values (4 nulls), 5 of 50 and 5 of 70 → 60; the nulls would drag a naive mean down.
    const anchors = computeAnchors(
      rows(14, (d) => ({ heart_rate_variability: d >= 10 ? null : d % 2 === 0 ? 50 : 70 })),
    );
    expect(byKey(anchors).heart_rate_variability_mean_14d).toMatchObject({ value: 60, n: 10, unit: 'ms' });
  });

  test('an anchor resting on fewer than 7 days is skipped; a change needs 7 in each window', () => {
    const anchors = computeAnchors(
      rows(28, (d) => ({
        // 6 recent values: no mean, no change.
        steps: d < 6 ? 9000 : d < 14 ? null : 8000,
        // 7 recent, 6 prior: a mean, no change.
        active_zone_minutes: d < 7 ? 30 : d < 14 ? null : d < 20 ? 20 : null,
        // 7 recent, 7 prior: both.
        deep_sleep_minutes: d < 7 ? 80 : d < 14 ? null : d < 21 ? 70 : null,
      })),
    );
    expect(Object.keys(byKey(anchors))).toEqual([
      'deep_sleep_minutes_mean_14d',
      'deep_sleep_minutes_change_14d',
      'active_zone_minutes_mean_14d',
    ]);
    expect(byKey(anchors).deep_sleep_minutes_change_14d).toMatchObject({ value: 10, n: 14 });
  });

  test('windows count back from the latest day in the data, by calendar day, whatever the row order', () => {
    // 40 days: the oldest 12 are outside both windows and are wildly different; then shuffle and drop a row.
    const ordered = rows(40, (d) => ({ sleep_minutes: d >= 28 ? 10_000 : d < 14 ? 450 : 400 }));
    const shuffled = [...ordered.slice(20), ...ordered.slice(0, 20)].filter((r) => r.date !== '2025-03-20');
    const anchors = byKey(computeAnchors(shuffled));
    expect(anchors.sleep_minutes_mean_14d).toMatchObject({ value: 450, n: 13, window: '14 days to 2025-03-28' });
    expect(anchors.sleep_minutes_change_14d).toMatchObject({ value: 50, n: 27 });
  });

  test('no rows, or only sparse ones, give no anchors', () => {
    expect(computeAnchors([])).toEqual([]);
    expect(computeAnchors(rows(28, (d) => ({ steps: d % 5 === 0 ? 5000 : null })))).toEqual([]);
  });
});

describe('citing an anchor', () => {
  const anchors: PersonalAnchor[] = [
    { key: 'sleep_minutes_mean_14d', label: 'x', value: 412.3, unit: 'min', n: 14, window: 'w' },
    { key: 'sleep_minutes_change_14d', label: 'x', value: -22.4, unit: 'min', n: 28, window: 'w' },
  ];

  test.each([
    ['the value as listed', 'You slept 412.3 min a night.', ['sleep_minutes_mean_14d']],
    ['rounded within 2 %', 'About 412 minutes a night.', ['sleep_minutes_mean_14d']],
    ['a change stated without its sign', '22.4 fewer minutes than before.', ['sleep_minutes_change_14d']],
    ['a number off by more than 2 %', 'Around 380 minutes.', []],
    ['a percentage, which no anchor is', 'Down 22.4% on before.', []],
  ])('%s', (_why, text, keys) => {
    expect(citedAnchorKeys(text, anchors)).toEqual(keys);
  });
});

describe('reading the gates', () => {
  test.each([
    ['[VERDICT]: YESREC', 'YESREC'],
    ['Thinking it over.\n[verdict] : norec', 'NOREC'],
    ['YESREC', null],
    ['[VERDICT]', null],
    ['[VERDICT]: MAYBE', null],
  ])('recommend gate %j → %s', (text, verdict) => {
    expect(parseRecommendVerdict(text)).toBe(verdict);
  });

  test.each([
    ['FINISH', 'FINISH'],
    [' continue.\n', 'CONTINUE'],
    ['FIN', null],
    ['FINISH or CONTINUE', null],
  ])('finish gate %j → %s', (text, decision) => {
    expect(parseFinishDecision(text)).toBe(decision);
  });

  const asked = (question: string): ScriptedRequest<'health_coach.gate'> => ({
    step: 'health_coach.gate',
    inputs: { messages: [{ role: 'user', content: question }], question },
    model: 'm',
    messages: [],
    tools: [],
    web: NO_WEB,
  });
  test.each([
    ['Can you help me sleep more?', 'YESREC'],
    ['I want a plan for my steps', 'YESREC'],
    ['Set me a goal for deep sleep', 'YESREC'],
    ['How can I improve my HRV?', 'YESREC'],
    ['Why is my resting heart rate up?', 'NOREC'],
  ])('the scripted gate: %j → %s', (question, verdict) => {
    expect(healthCoachGate.respond(asked(question))).toEqual({ text: `[VERDICT]: ${verdict}` });
  });
});

// ---------------------------------------------------------------------------------------------------
// The activity

/** A coach that never quotes a number; asked to anchor, it does only when the question is not "stubborn". */
const unanchoredMain: ScriptedRule<'health_coach.main'> = {
  step: 'health_coach.main',
  respond({ inputs }) {
    if (inputs.remindOfAnchors && !inputs.question.includes('stubborn')) {
      const [anchor] = inputs.anchors;
      return { text: `Your sleep came to ${anchor?.value} ${anchor?.unit} a night. What would make bedtime easier?` };
    }
    return { text: 'Sleep matters a lot for recovery. What would make bedtime easier?' };
  },
};

let h: StepHarness;
let canned: StepHarness;
beforeAll(async () => {
  [h, canned] = await Promise.all([
    startStepHarness({ rules: healthCoachRules }),
    startStepHarness({ rules: [healthCoachGate, unanchoredMain, healthCoachFinish, healthCoachSummary] }),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), canned?.close()]);
});
beforeEach(() => {
  for (const harness of [h, canned]) {
    harness.scripted.requests.clear();
    harness.scripted.faults.clear();
  }
});

let warnings: string[] = [];
const recordingLogger = new DefaultLogger('WARN', (entry: LogEntry) => {
  if (entry.level === 'WARN') warnings.push(entry.message);
});
beforeEach(() => {
  warnings = [];
});

/** A turn whose user has the demo data set ending on a fixed day, so the anchors are the same every run. */
async function coachInput(harness: StepHarness, overrides: Partial<CoachUserInput> = {}): Promise<CoachUserInput> {
  const turnId = await harness.newTurn();
  const { userId } = await harness.database.db.turn.findUniqueOrThrow({ where: { id: turnId } });
  await seedDemoHealthData(harness.deps.pool, userId, { endDate: new Date(`${END}T00:00:00Z`) });
  const question = overrides.question ?? 'Can you help me make a plan to sleep more?';
  return {
    turnId,
    userId,
    messages: [{ role: 'user', content: question }],
    question,
    findings: [],
    supportingInsights: '',
    ...overrides,
  };
}

function coachUser(harness: StepHarness, input: CoachUserInput): Promise<CoachUserOutput> {
  return new MockActivityEnvironment({}, { logger: recordingLogger }).run(createCoachUser(harness.deps), input);
}

const requestsFor = (harness: StepHarness, step: string) =>
  harness.scripted.requests.entries().filter((r) => r.step === step);
const promptOf = (request: { messages: Array<{ content: unknown }> }) => String(request.messages[0].content);

async function anchorsOf(harness: StepHarness, userId: string) {
  return computeAnchors((await readUserHealthData(harness.deps.pool, userId)).daily);
}

const statedValue = (a: PersonalAnchor) => `${a.value}${a.unit ? ` ${a.unit}` : ''}`;

describe('the coach', () => {
  test('YESREC: a plan request gets the recommending prompt and one SMART goal anchored on the sleep mean', async () => {
    const input = await coachInput(h);
    const out = await coachUser(h, input);
    const anchors = await anchorsOf(h, input.userId);
    const sleep = byKey(anchors).sleep_minutes_mean_14d;

    expect(out.verdict).toBe('YESREC');
    expect(out.anchors).toEqual(anchors);
    expect(anchors.length).toBeGreaterThanOrEqual(6);
    expect(out.reply).toContain(statedValue(sleep));
    expect(out.reply).toMatch(/SMART goal/);
    expect(out.reply.trim().endsWith('?')).toBe(true);
    expect(out.citedAnchors).toContain('sleep_minutes_mean_14d');

    const [gate] = requestsFor(h, 'health_coach.gate');
    expect(gate.model).toBe(h.deps.models.fast);
    expect(promptOf(gate)).toContain(`QUESTION:\n${input.question}`);
    const main = requestsFor(h, 'health_coach.main');
    expect(main).toHaveLength(1);
    expect(main[0].model).toBe(h.deps.models.main);
    expect(main[0].system).toContain('Current mode: YESREC');
    expect(main[0].system).not.toContain('Current mode: NOREC');
    for (const a of anchors) {
      expect(promptOf(main[0])).toContain(`- ${a.key} = ${statedValue(a)} (n=${a.n}, ${a.window})`);
    }

    expect(out.finish).toBe('CONTINUE');
    expect(out.closingSummary).toBeNull();
    expect(requestsFor(h, 'health_coach.finish')).toHaveLength(1);
    expect(requestsFor(h, 'health_coach.summary')).toHaveLength(0);

    // The cost is the sum of the turn's billed calls: gate, main, finish.
    const calls = await h.database.db.llmCall.findMany({ where: { turnId: input.turnId } });
    expect(calls.map((c) => c.step).sort()).toEqual(['health_coach.finish', 'health_coach.gate', 'health_coach.main']);
    expect(out.costUsd).toBeGreaterThan(0);
    expect(out.costUsd).toBeCloseTo(
      calls.reduce((sum, c) => sum + c.costUsd.toNumber(), 0),
      5, // the ledger keeps 6 decimals per call
    );
  });

  test('NOREC: a why-question gets the context-gathering prompt and one focused question, no plan', async () => {
    const input = await coachInput(h, { question: 'Why has my deep sleep been so low lately?' });
    const out = await coachUser(h, input);
    const deep = byKey(out.anchors).deep_sleep_minutes_mean_14d;

    expect(out.verdict).toBe('NOREC');
    const [main] = requestsFor(h, 'health_coach.main');
    expect(main.system).toContain('Current mode: NOREC');
    expect(main.system).not.toContain('Current mode: YESREC');
    expect(out.reply).toContain(statedValue(deep));
    expect(out.citedAnchors).toContain('deep_sleep_minutes_mean_14d');
    expect(out.reply).not.toMatch(/SMART goal/);
    expect(out.reply.trim().endsWith('?')).toBe(true);
    expect(warnings).toEqual([]);
  });

  test('a malformed gate answer is NOREC, and is logged', async () => {
    h.scripted.faults.inject({ kind: 'malformed', step: 'health_coach.gate' });
    // A plan request: a well-formed gate would say YESREC.
    const out = await coachUser(h, await coachInput(h));
    expect(out.verdict).toBe('NOREC');
    expect(requestsFor(h, 'health_coach.main')[0].system).toContain('Current mode: NOREC');
    expect(warnings).toEqual([expect.stringMatching(/recommend gate answer malformed/)]);
  });

  test('a reply citing no anchor gets exactly one more call, told to anchor; that reply is kept', async () => {
    const input = await coachInput(canned);
    const out = await coachUser(canned, input);
    const main = requestsFor(canned, 'health_coach.main');
    expect(main).toHaveLength(2);
    expect(promptOf(main[0])).not.toContain('ANCHOR REMINDER:');
    expect(promptOf(main[1])).toContain('ANCHOR REMINDER:');
    expect(out.reply).toContain(statedValue(out.anchors[0]));
    expect(out.reply).not.toContain('For reference');
    expect(out.citedAnchors).toEqual([out.anchors[0].key]);
  });

  test('a reply that still cites none gets one deterministic sentence citing the first anchor, and a warning', async () => {
    const input = await coachInput(canned, { question: 'I am stubborn: help me sleep more' });
    const out = await coachUser(canned, input);
    expect(requestsFor(canned, 'health_coach.main')).toHaveLength(2);
    const first = out.anchors[0];
    expect(first.key).toBe('sleep_minutes_mean_14d');
    expect(out.reply).toBe(
      `Sleep matters a lot for recovery. What would make bedtime easier?\n\n${anchorSentence(first)}`,
    );
    expect(anchorSentence(first)).toContain(statedValue(first));
    expect(out.citedAnchors).toEqual([first.key]);
    expect(warnings).toEqual([expect.stringMatching(/cited no personal anchor/)]);
    // The appended sentence is narrated too, so the thoughts hold everything the reply says.
    const thoughts = (await canned.deps.events.readAfter(input.turnId, 0))
      .filter((e) => e.type === 'agent.thought')
      .map((e) => e.data.delta)
      .join('');
    expect(thoughts.endsWith(anchorSentence(first))).toBe(true);
  });

  test('a user without data gets no anchors and no re-ask (there is nothing to cite)', async () => {
    const turnId = await h.newTurn();
    const { userId } = await h.database.db.turn.findUniqueOrThrow({ where: { id: turnId } });
    const question = 'Can you help me make a plan to sleep more?';
    const out = await coachUser(h, {
      turnId,
      userId,
      messages: [{ role: 'user', content: question }],
      question,
      findings: [],
      supportingInsights: '',
    });
    expect(out.anchors).toEqual([]);
    expect(out.citedAnchors).toEqual([]);
    expect(requestsFor(h, 'health_coach.main')).toHaveLength(1);
    expect(promptOf(requestsFor(h, 'health_coach.main')[0])).toContain('PERSONAL ANCHORS:\n(none');
    expect(out.reply).not.toContain('For reference');
  });

  test('rejected findings never reach any prompt, whatever the caller passes; the others do, tagged', async () => {
    const finding = (id: string, claim: string, numbers: Finding['numbers']): Finding => ({
      id,
      claim,
      kind: 'association',
      feature: 'active_zone_minutes',
      target: 'deep_sleep_minutes',
      numbers,
      n: 88,
      window: 'last 90 days',
    });
    const findings: CoachFinding[] = [
      {
        finding: finding('ds-rej', 'Days with more steps bring more REM sleep', { rho: 0.0571, ci: [-0.1234, 0.2468] }),
        verdict: 'rejected',
        assessment: { mechanism: 'Quixotic mechanism', strategy: 'Walk backwards at dawn' },
      },
      {
        finding: finding('ds-001', 'More active zone minutes go with more deep sleep', { rho: 0.47 }),
        verdict: 'validated',
        assessment: {
          mechanism: 'Exercise raises sleep pressure.',
          strategy: 'schedule two brisk sessions this week, each ending 3 hours before bed.',
        },
      },
      {
        finding: finding('ds-002', 'Deep sleep trends up on training weeks', { effect: 6.2 }),
        verdict: 'conditional',
        assessment: null,
      },
    ];
    const input = await coachInput(h, {
      findings,
      messages: [{ role: 'user', content: 'Thanks! Help me get more deep sleep.' }],
      question: 'Help me get more deep sleep.',
    });
    const out = await coachUser(h, input);

    const requests = h.scripted.requests.entries();
    expect(requests.map((r) => r.step).sort()).toEqual([
      'health_coach.finish',
      'health_coach.gate',
      'health_coach.main',
      'health_coach.summary',
    ]);
    for (const request of requests) {
      const seen = JSON.stringify([request.system, request.messages]);
      for (const leaked of ['ds-rej', 'REM sleep', '0.0571', '0.1234', '0.2468', 'Quixotic', 'Walk backwards']) {
        expect(seen).not.toContain(leaked);
      }
    }
    const mainPrompt = promptOf(requestsFor(h, 'health_coach.main')[0]);
    expect(mainPrompt).toContain('- ds-001 [VALIDATED]: More active zone minutes go with more deep sleep');
    expect(mainPrompt).toContain('  strategy: schedule two brisk sessions this week');
    expect(mainPrompt).toContain('- ds-002 [CONDITIONAL]: Deep sleep trends up on training weeks');
    expect(out.reply).toContain('schedule two brisk sessions this week');
    expect(warnings).toEqual([expect.stringMatching(/rejected findings withheld/)]);
  });

  test('FINISH: when the user wraps up, a closing summary is written and appended', async () => {
    const messages: Message[] = [
      { role: 'user', content: 'Can you help me make a plan to sleep more?' },
      { role: 'assistant', content: 'Lights out half an hour earlier on weeknights. Which day will you start?' },
      { role: 'user', content: "Monday. Thanks, that's all for now!" },
    ];
    const input = await coachInput(h, { messages, question: 'I will start on Monday.' });
    const out = await coachUser(h, input);

    expect(out.finish).toBe('FINISH');
    expect(out.closingSummary).toMatch(/^To sum up/);
    expect(out.closingSummary).not.toMatch(/\d/);
    expect(out.reply.endsWith(`\n\n${out.closingSummary}`)).toBe(true);
    const [summary] = requestsFor(h, 'health_coach.summary');
    expect(summary.model).toBe(h.deps.models.fast);
    expect(promptOf(summary)).toContain("user: Monday. Thanks, that's all for now!");
    expect(promptOf(summary)).toContain(`COACH REPLY:\n${out.reply.slice(0, out.reply.indexOf('\n\n'))}`);
  });

  test('narration: started, thoughts that spell the reply, completed with the summed cost — all under health_coach', async () => {
    const messages: Message[] = [{ role: 'user', content: "Help me walk more. Thanks, that's all!" }];
    const input = await coachInput(h, { messages, question: 'Help me walk more.' });
    const out = await coachUser(h, input);
    const events = await h.deps.events.readAfter(input.turnId, 0);

    expect(events[0]).toMatchObject({
      type: 'agent.started',
      data: { agent: 'health_coach', question: 'Help me walk more.' },
    });
    expect(events.at(-1)).toMatchObject({
      type: 'agent.completed',
      data: { agent: 'health_coach', cost_usd: out.costUsd, output_summary: out.reply.slice(0, 160) },
    });
    const thoughts = events.filter((e) => e.type === 'agent.thought');
    expect(thoughts.length).toBeGreaterThan(1);
    expect(thoughts.every((e) => e.data.agent === 'health_coach' && e.data.attempt === 1)).toBe(true);
    // The closing summary streams too: the thoughts are the whole reply.
    expect(out.closingSummary).not.toBeNull();
    expect(thoughts.map((e) => e.data.delta).join('')).toBe(out.reply);
    expect(events.map((e) => e.type).filter((t) => t !== 'agent.thought')).toEqual([
      'agent.started',
      'agent.completed',
    ]);

    // Running the activity again (a retry) does not announce the coach twice.
    await coachUser(h, input);
    const again = await h.deps.events.readAfter(input.turnId, 0);
    expect(again.filter((e) => e.type === 'agent.started')).toHaveLength(1);
    expect(again.filter((e) => e.type === 'agent.completed')).toHaveLength(1);
  });
});
