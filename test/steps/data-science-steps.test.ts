/**
 * The Data Science agent's rules, one module at a time (the end-to-end run is data-question.test.ts):
 * - the plan's Spec is parsed strictly, and anything unusable is the model's fault (retryable);
 * - the code is the answer's first fenced block, or the whole answer;
 * - a descriptive question becomes one finding straight from the sandbox result, with no model call;
 * - extracted findings keep only numbers that trace to the result, and get their ids from us;
 * - the final verdict combines the gates and the Critic as docs/design.md#verdict-aggregation says, and the counts follow it.
 */
import { findingSchema, type AgentFinding, type GateVerdict } from '../../contracts/findings';
import type { CriticDecision } from '../../activities/steps/critic/verdict';
import { codeFromAnswer } from '../../activities/agents/data-science/code';
import {
  createExtractFindings,
  descriptiveFinding,
  looksDescriptive,
  resultNumbers,
  type ExtractFindingsInput,
} from '../../activities/agents/data-science/findings';
import type { AnalysisSpec } from '../../activities/agents/data-science/analysis-spec';
import { parsePlan } from '../../activities/agents/data-science/plan';
import { ModelOutputInvalidError } from '../../platform/llm/errors';
import type { ValidatedFinding } from '../../activities/steps/run-gates';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { finalVerdict, validatorCounts } from '../../workflows/validate-findings';
import { startStepHarness, type StepHarness } from '../support/step-harness';

/** Throws unless `parse` fails with ModelOutputInvalidError for the given reason. */
function expectModelOutputInvalid(parse: () => unknown, reason: RegExp): void {
  let thrown: unknown;
  try {
    parse();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ModelOutputInvalidError);
  expect((thrown as Error).message).toMatch(reason);
}

describe('parsePlan', () => {
  const plan = (spec: string) =>
    `== Approach ==\nCorrelate daily steps with the next night's sleep score.\n== Spec ==\n${spec}`;

  test('a well-formed plan gives the approach and the spec', () => {
    expect(
      parsePlan(plan('kind: association\nfeature: steps\ntarget: sleep_score\nwindow_days: 90\n'), 'req_1'),
    ).toEqual({
      approach: "Correlate daily steps with the next night's sleep score.",
      spec: { kind: 'association', feature: 'steps', target: 'sleep_score', windowDays: 90 },
    });
  });

  test('window_days: all means every available day (null)', () => {
    const { spec } = parsePlan(plan('kind: association\nfeature: steps\ntarget: sleep_score\nwindow_days: all'));
    expect(spec.windowDays).toBeNull();
  });

  test('target: none is no target', () => {
    const { spec } = parsePlan(plan('kind: scalar\nfeature: resting_heart_rate\ntarget: none\nwindow_days: 90'));
    expect(spec).toEqual({ kind: 'scalar', feature: 'resting_heart_rate', target: null, windowDays: 90 });
  });

  test('only an association keeps a target: a scalar given one has none', () => {
    const { spec } = parsePlan(plan('kind: scalar\nfeature: resting_heart_rate\ntarget: steps\nwindow_days: 90'));
    expect(spec.target).toBeNull();
  });

  test('a blank field is absent, not the text of the line after it', () => {
    const { spec } = parsePlan(plan('kind: scalar\nfeature: resting_heart_rate\ntarget:\nwindow_days: 90'));
    expect(spec).toEqual({ kind: 'scalar', feature: 'resting_heart_rate', target: null, windowDays: 90 });
  });

  test('statistic and offset_days say what was computed and where the window ends', () => {
    const { spec } = parsePlan(
      plan('kind: scalar\nstatistic: total\nfeature: steps\ntarget: none\nwindow_days: 7\noffset_days: 7'),
    );
    expect(spec).toEqual({
      kind: 'scalar',
      statistic: 'total',
      feature: 'steps',
      target: null,
      windowDays: 7,
      offsetDays: 7,
    });
    // A window given as a date keeps it, and counts window_days to the last date.
    expect(
      parsePlan(plan('kind: scalar\nstatistic: mean\nfeature: steps\nwindow_days: 177\nsince: 2026-06-01')).spec,
    ).toEqual({
      kind: 'scalar',
      statistic: 'mean',
      feature: 'steps',
      target: null,
      windowDays: 177,
      since: '2026-06-01',
    });
    // offset_days 0 is the default, and not written out.
    expect(parsePlan(plan('kind: scalar\nfeature: steps\nwindow_days: 7\noffset_days: 0')).spec).toEqual({
      kind: 'scalar',
      feature: 'steps',
      target: null,
      windowDays: 7,
    });
  });

  test("a table, a workout type and a calendar window counted from the data's last day", () => {
    const october = plan(
      'kind: scalar\nstatistic: max\ntable: workouts\nfeature: duration_minutes\nworkout_type: running\n' +
        'window_days: 3\nsince: 2026-10-01\nuntil: 2026-10-31',
    );
    // The model's window_days (3) is not trusted: October is 31 days, ending 25 days before 2026-11-25.
    expect(parsePlan(october, null, '2026-11-25').spec).toEqual({
      kind: 'scalar',
      statistic: 'max',
      feature: 'duration_minutes',
      target: null,
      windowDays: 31,
      offsetDays: 25,
      since: '2026-10-01',
      until: '2026-10-31',
      table: 'workouts',
      workoutType: 'running',
    });
    // A month that has not ended by the last day ends there.
    expect(parsePlan(october, null, '2026-10-10').spec).toMatchObject({ windowDays: 10, until: '2026-10-31' });
    expect(parsePlan(october, null, '2026-10-10').spec.offsetDays).toBeUndefined();
    // A lab biomarker in the labs table; workout_type none is every workout.
    expect(
      parsePlan(
        plan('kind: scalar\nstatistic: latest_change\ntable: labs\nfeature: ldl_cholesterol\nworkout_type: none'),
      ).spec,
    ).toEqual({
      kind: 'scalar',
      statistic: 'latest_change',
      feature: 'ldl_cholesterol',
      target: null,
      windowDays: null,
      table: 'labs',
    });
  });

  test.each([
    [
      'a table that is not one of the three',
      plan('kind: scalar\nfeature: steps\ntable: meals'),
      /unknown table \(meals\)/,
    ],
    [
      'a workout type that is not one',
      plan('kind: scalar\ntable: workouts\nfeature: workouts\nworkout_type: rowing'),
      /workout_type \(rowing\)/,
    ],
    [
      'a workout type on the daily table',
      plan('kind: scalar\nfeature: steps\nworkout_type: running'),
      /workout_type \(running\)/,
    ],
    [
      'an until without a since',
      plan('kind: scalar\nfeature: steps\nwindow_days: 9\nuntil: 2026-10-31'),
      /until without a since/,
    ],
    [
      'an until before its since',
      plan('kind: scalar\nfeature: steps\nwindow_days: 9\nsince: 2026-10-31\nuntil: 2026-10-01'),
      /until before its since/,
    ],
  ])('%s is refused', (_, text, reason) => {
    expectModelOutputInvalid(() => parsePlan(text), reason);
  });

  test("a since after the data's last day is refused", () => {
    expectModelOutputInvalid(
      () => parsePlan(plan('kind: scalar\nfeature: steps\nsince: 2026-12-01\nuntil: 2026-12-31'), null, '2026-11-25'),
      /after the data's last day/,
    );
  });

  test.each([
    [
      'a statistic that is not one of the list',
      plan('kind: scalar\nstatistic: mode\nfeature: steps'),
      /unknown statistic \(mode\)/,
    ],
    ['offset_days -1', plan('kind: scalar\nfeature: steps\nwindow_days: 7\noffset_days: -1'), /invalid offset_days/],
    ['a since that is no date', plan('kind: scalar\nfeature: steps\nwindow_days: 9\nsince: June'), /invalid since/],
    [
      'a since over all days',
      plan('kind: scalar\nfeature: steps\nwindow_days: all\nsince: 2026-06-01'),
      /since without/,
    ],
    [
      'offset_days over all days',
      plan('kind: scalar\nfeature: steps\nwindow_days: all\noffset_days: 3'),
      /offset_days without/,
    ],
    ['no Approach', '== Spec ==\nkind: scalar\nfeature: steps', /no == Approach ==/],
    ['no Spec', '== Approach ==\nAverage the daily steps.', /no == Spec ==/],
    ['a kind that is not one of the three', plan('kind: correlation\nfeature: steps'), /no valid kind/],
    ['a feature that is not a snake_case column', plan('kind: scalar\nfeature: Resting HR'), /no valid feature/],
    ['an association without a target', plan('kind: association\nfeature: steps\ntarget: none'), /without a target/],
    ['window_days 0', plan('kind: scalar\nfeature: steps\nwindow_days: 0'), /invalid window_days \(0\)/],
    ['window_days -3', plan('kind: scalar\nfeature: steps\nwindow_days: -3'), /invalid window_days \(-3\)/],
    ['window_days 2.5', plan('kind: scalar\nfeature: steps\nwindow_days: 2.5'), /invalid window_days \(2\.5\)/],
    ['window_days ninety', plan('kind: scalar\nfeature: steps\nwindow_days: ninety'), /invalid window_days/],
    ['window_days 1e2', plan('kind: scalar\nfeature: steps\nwindow_days: 1e2'), /invalid window_days \(1e2\)/],
    ['window_days 0x10', plan('kind: scalar\nfeature: steps\nwindow_days: 0x10'), /invalid window_days \(0x10\)/],
  ])('a plan with %s is invalid model output', (_case, text, reason) => {
    expectModelOutputInvalid(() => parsePlan(text), reason);
  });
});

describe('codeFromAnswer', () => {
  test("the body of the answer's first fenced python block", () => {
    const answer = [
      'Here is the body:',
      '```python',
      "    recent = summary_df.tail(90)['resting_heart_rate']",
      "    return {'mean': float(recent.mean()), 'n': int(recent.count())}",
      '```',
      'And an alternative:',
      '```python',
      "    return {'mean': 0}",
      '```',
    ].join('\n');
    expect(codeFromAnswer(answer)).toBe(
      "    recent = summary_df.tail(90)['resting_heart_rate']\n" +
        "    return {'mean': float(recent.mean()), 'n': int(recent.count())}",
    );
  });

  test('a fence labelled python3 is a python fence', () => {
    expect(codeFromAnswer("```python3\nreturn {'n': 1}\n```")).toBe("return {'n': 1}");
  });

  test('an answer without a fence is the code itself, trailing whitespace trimmed', () => {
    expect(codeFromAnswer("    return {'n': int(summary_df['steps'].count())}\n\n")).toBe(
      "    return {'n': int(summary_df['steps'].count())}",
    );
  });

  test.each([
    ['an empty answer', ''],
    ['a blank answer', '  \n\t\n'],
    ['an empty fenced block', '```python\n```'],
  ])('%s holds no code: invalid model output', (_case, answer) => {
    expectModelOutputInvalid(() => codeFromAnswer(answer), /holds no code/);
  });
});

describe('looksDescriptive', () => {
  test.each([
    'What is my average resting heart rate over the last 90 days?',
    'Compute the mean of resting_heart_rate over the last 90 days.',
    'How much did I sleep on average?',
  ])('a level is descriptive: %s', (question) => {
    expect(looksDescriptive(question)).toBe(true);
  });

  test.each([
    'Is my step count related to my REM sleep?',
    'Compute the change in the mean of steps over the last 30 days versus the 30 days before.',
    'Compute the Spearman correlation between steps and sleep_score over all available days.',
  ])('a relationship or a change is not: %s', (question) => {
    expect(looksDescriptive(question)).toBe(false);
  });
});

describe('resultNumbers', () => {
  test('keeps finite numbers and CI pairs, flattens one level into sanitised lowercase keys', () => {
    expect(
      resultNumbers({
        mean: 60.39,
        n: 88,
        ci: [58.1, 62.7],
        by_day: { Monday: 61.2, 'Day Off': 59.8, weekend: { saturday: 59 } },
        'Mean HR (bpm)': 60.4,
      }),
    ).toEqual({ mean: 60.39, n: 88, ci: [58.1, 62.7], by_day_monday: 61.2, by_day_day_off: 59.8, mean_hr_bpm: 60.4 });
  });

  test('drops NaN, infinities, strings, booleans, nulls and arrays that are not number pairs', () => {
    expect(
      resultNumbers({
        mean: 60.39,
        nan: NaN,
        inf: Infinity,
        minus_inf: -Infinity,
        label: 'resting heart rate',
        flag: true,
        missing: null,
        triple: [1, 2, 3],
        half_ci: [58.1, NaN],
        words: ['low', 'high'],
        by_day: { monday: NaN, tuesday: 'n/a', wednesday: 61 },
      }),
    ).toEqual({ mean: 60.39, by_day_wednesday: 61 });
  });

  test('a result that is not an object becomes `value`', () => {
    expect(resultNumbers(60.39)).toEqual({ value: 60.39 });
    expect(resultNumbers([58.1, 62.7])).toEqual({ value: [58.1, 62.7] });
    expect(resultNumbers('sixty')).toEqual({});
    expect(resultNumbers(null)).toEqual({});
  });
});

describe('descriptiveFinding', () => {
  const restingHeartRate: AnalysisSpec = {
    kind: 'scalar',
    feature: 'resting_heart_rate',
    target: null,
    windowDays: 90,
  };

  test("one finding of the plan's kind, from the result's numbers, with the metric's unit", () => {
    const finding = descriptiveFinding('ds-001', restingHeartRate, { mean: 60.39, sd: 4.2, n: 88 });
    expect(finding).toEqual({
      id: 'ds-001',
      claim: 'Resting heart rate over the last 90 days',
      kind: 'scalar',
      feature: 'resting_heart_rate',
      target: null,
      numbers: { mean: 60.39, sd: 4.2, n: 88 },
      n: 88,
      window: 'the last 90 days',
      unit: 'bpm',
    });
    expect(findingSchema.safeParse(finding).success).toBe(true);
  });

  test('no numbers, no finding', () => {
    expect(descriptiveFinding('ds-001', restingHeartRate, { note: 'no data in the window', mean: NaN })).toBeNull();
    expect(descriptiveFinding('ds-001', restingHeartRate, null)).toBeNull();
  });

  test.each([
    ['missing', {}],
    ['fractional', { n: 88.5 }],
    ['negative', { n: -1 }],
  ])('n is 0 when the result has no usable n (%s)', (_case, n) => {
    expect(descriptiveFinding('ds-001', restingHeartRate, { mean: 60.39, ...n })?.n).toBe(0);
  });

  test('an association over all days has no unit; a ratio has none either', () => {
    const association = descriptiveFinding(
      'ds-001',
      { kind: 'association', feature: 'steps', target: 'sleep_score', windowDays: null },
      { rho: 0.31, n: 120 },
    );
    expect(association).toMatchObject({
      claim: 'Steps and sleep score over all available days',
      target: 'sleep_score',
      window: 'all available days',
      unit: null,
    });
    expect(findingSchema.safeParse(association).success).toBe(true);

    const ratio = descriptiveFinding(
      'ds-001',
      { kind: 'scalar', feature: 'hrv_rhr_ratio', target: null, windowDays: null },
      { mean: 0.71, n: 120 },
    );
    expect(ratio?.unit).toBeNull();
  });

  test('workouts and labs are named as people say them, a calendar window by its dates, in their own units', () => {
    const october = { windowDays: 31, offsetDays: 25, since: '2026-10-01', until: '2026-10-31' };
    expect(
      descriptiveFinding(
        'ds-001',
        { kind: 'scalar', statistic: 'count', table: 'workouts', feature: 'workouts', target: null, ...october },
        { count: 14, n: 14 },
      ),
    ).toMatchObject({ claim: 'Number of workouts over October 2026', window: 'October 2026', unit: null });
    const farthest = descriptiveFinding(
      'ds-001',
      {
        kind: 'scalar',
        statistic: 'max',
        table: 'workouts',
        workoutType: 'running',
        feature: 'distance_km',
        target: null,
        windowDays: 365,
        since: '2025-01-01',
        until: '2025-12-31',
      },
      { max: 21.1, n: 80 },
    );
    expect(farthest).toMatchObject({ claim: 'Farthest running workout over 2025', unit: 'km' });
    const ldl = descriptiveFinding(
      'ds-001',
      {
        kind: 'scalar',
        statistic: 'latest_change',
        table: 'labs',
        feature: 'ldl_cholesterol',
        target: null,
        windowDays: null,
      },
      { latest: 118, latest_date: '2026-10-31', previous: 129.9, change: -11.9, n: 3 },
    );
    expect(ldl).toMatchObject({
      claim: 'LDL cholesterol at the latest panel against the previous one and the first over all available days',
      numbers: { latest: 118, previous: 129.9, change: -11.9, n: 3 },
      unit: 'mg/dL',
    });
  });
});

describe('extractFindings, through the real activity and a canned model', () => {
  /** What the canned extraction model answers; each test sets it before running the activity. */
  let cannedAnswer = '';
  const cannedExtract: ScriptedRule = { step: 'ds_extract', respond: () => ({ text: cannedAnswer }) };

  let h: StepHarness;
  beforeAll(async () => {
    h = await startStepHarness({ rules: [cannedExtract] });
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => h.scripted.requests.clear());

  const stepsAndSleep: AnalysisSpec = { kind: 'association', feature: 'steps', target: 'sleep_score', windowDays: 90 };
  const correlationResult = { rho: 0.31, p_value: 0.004, ci: [0.11, 0.49], n: 88 };

  const input = (turnId: string, overrides: Partial<ExtractFindingsInput> = {}): ExtractFindingsInput => ({
    turnId,
    invocation: 'main',
    question: 'Is my step count related to my sleep score?',
    plan: { approach: 'Spearman correlation of daily steps and sleep score.', spec: stepsAndSleep },
    result: correlationResult,
    summary: 'Steps and sleep score correlate with rho 0.31 over 88 days.',
    idPrefix: 'ds',
    ...overrides,
  });

  const extracted = (overrides: Record<string, unknown>) => ({
    claim: 'Days with more steps go with a higher sleep score',
    kind: 'association',
    feature: 'steps',
    target: 'sleep_score',
    numbers: { rho: 0.31 },
    n: 88,
    window: 'last 90 days',
    unit: null,
    ...overrides,
  });

  const extractSteps = () => h.scripted.requests.entries().filter((r) => r.step === 'ds_extract');

  test('numbers that do not trace to the result are dropped, and so is a finding left with none', async () => {
    cannedAnswer = JSON.stringify([
      // The tolerance is 2 % of the result's number, at least 0.05. Kept: 0.32 (0.01 from 0.31), 89.5 (1.5 from 88).
      // Dropped: 0.37 (0.06 from 0.31), 91 (3 from 88, more than 2 %).
      extracted({ numbers: { rho: 0.32, ci: [0.11, 0.49], rho_adjusted: 0.37, days: 89.5, weeks: 91 } }),
      extracted({ claim: 'Steps raise sleep score by 12.5 points', numbers: { effect: 12.5 } }),
    ]);
    const out = await h.run(createExtractFindings(h.deps), input(await h.newTurn()));
    expect(out.findings.map((f) => f.finding.numbers)).toEqual([{ rho: 0.32, ci: [0.11, 0.49], days: 89.5 }]);
    expect(out.descriptive).toBe(false);
    expect(extractSteps()).toHaveLength(1);
  });

  test('a number whose sign the model flipped does not trace, nor does a key with no name', async () => {
    cannedAnswer = JSON.stringify([extracted({ numbers: { rho: -0.31, '%': 0.31, ci: [0.11, 0.49] } })]);
    const out = await h.run(createExtractFindings(h.deps), input(await h.newTurn()));
    expect(out.findings.map((f) => f.finding.numbers)).toEqual([{ ci: [0.11, 0.49] }]);
  });

  test('a sample size the result does not hold is not believed: n is 0', async () => {
    cannedAnswer = JSON.stringify([extracted({ n: 88 }), extracted({ claim: 'Same, larger n', n: 500 })]);
    const out = await h.run(createExtractFindings(h.deps), input(await h.newTurn()));
    expect(out.findings.map((f) => f.finding.n)).toEqual([88, 0]);
  });

  test('a CI pair is kept only when both of its ends trace to the result', async () => {
    cannedAnswer = JSON.stringify([extracted({ numbers: { rho: 0.31, ci: [0.11, 0.95] } })]);
    const out = await h.run(createExtractFindings(h.deps), input(await h.newTurn()));
    expect(out.findings.map((f) => f.finding.numbers)).toEqual([{ rho: 0.31 }]);
  });

  test('ids are assigned in order from the prefix, whatever ids the model gives', async () => {
    cannedAnswer = JSON.stringify([
      extracted({ id: 'finding-7' }),
      extracted({ id: 'finding-3', claim: 'The correlation is significant', numbers: { p_value: 0.004 } }),
    ]);
    const out = await h.run(createExtractFindings(h.deps), input(await h.newTurn()));
    expect(out.findings).toEqual([
      {
        finding: {
          id: 'ds-001',
          claim: 'Days with more steps go with a higher sleep score',
          kind: 'association',
          feature: 'steps',
          target: 'sleep_score',
          numbers: { rho: 0.31 },
          n: 88,
          window: 'last 90 days',
          unit: null,
        },
        windowDays: 90,
        source: 'data_science',
      },
      expect.objectContaining({ finding: expect.objectContaining({ id: 'ds-002', numbers: { p_value: 0.004 } }) }),
    ]);
  });

  test('a malformed element is dropped and the others are kept, numbered without a gap', async () => {
    cannedAnswer = JSON.stringify([
      extracted({ claim: 'First' }),
      extracted({ claim: 'Fruit', kind: 'banana' }),
      extracted({ claim: 'Third', numbers: { n: 88 } }),
    ]);
    const out = await h.run(createExtractFindings(h.deps), input(await h.newTurn()));
    expect(out.findings.map((f) => [f.finding.id, f.finding.claim])).toEqual([
      ['ds-001', 'First'],
      ['ds-002', 'Third'],
    ]);
  });

  test('a descriptive question makes no model call and yields the deterministic finding', async () => {
    cannedAnswer = 'the model must not be asked';
    const restingHeartRate: AnalysisSpec = {
      kind: 'scalar',
      feature: 'resting_heart_rate',
      target: null,
      windowDays: 90,
    };
    const result = { mean: 60.39, n: 88 };
    const out = await h.run(
      createExtractFindings(h.deps),
      input(await h.newTurn(), {
        question: 'What is my average resting heart rate over the last 90 days?',
        plan: { approach: 'Mean resting heart rate over the last 90 days.', spec: restingHeartRate },
        result,
      }),
    );
    expect(out).toEqual({
      findings: [
        { finding: descriptiveFinding('ds-001', restingHeartRate, result), windowDays: 90, source: 'data_science' },
      ],
      descriptive: true,
      costUsd: 0,
    });
    expect(out.findings[0]?.finding.unit).toBe('bpm');
    expect(extractSteps()).toEqual([]);
  });

  test('a scalar plan is descriptive too, however the question is worded: no model call', async () => {
    cannedAnswer = 'the model must not be asked';
    const dailySteps: AnalysisSpec = { kind: 'scalar', feature: 'steps', target: null, windowDays: null };
    const out = await h.run(
      createExtractFindings(h.deps),
      input(await h.newTurn(), {
        question: 'Am I active enough?',
        plan: { approach: 'Mean daily steps over all days.', spec: dailySteps },
        result: { mean: 8412, n: 240 },
        idPrefix: 'dsr',
      }),
    );
    expect(out.descriptive).toBe(true);
    expect(out.findings.map((f) => [f.finding.id, f.finding.numbers, f.finding.window])).toEqual([
      ['dsr-001', { mean: 8412, n: 240 }, 'all available days'],
    ]);
    expect(extractSteps()).toEqual([]);
  });

  test('an answer that is not JSON is invalid model output', async () => {
    cannedAnswer = 'Steps and sleep score are positively correlated (rho 0.31).';
    await expect(h.run(createExtractFindings(h.deps), input(await h.newTurn()))).rejects.toBeInstanceOf(
      ModelOutputInvalidError,
    );
    expect(extractSteps()).toHaveLength(1);
  });
});

describe('finalVerdict', () => {
  test.each<[GateVerdict, CriticDecision, GateVerdict]>([
    ['rejected', 'accept', 'rejected'],
    ['rejected', 'downgrade', 'rejected'],
    ['rejected', 'reject', 'rejected'],
    ['validated', 'reject', 'rejected'],
    ['conditional', 'reject', 'rejected'],
    ['validated', 'downgrade', 'conditional'],
    ['conditional', 'downgrade', 'conditional'],
    ['validated', 'accept', 'validated'],
    ['conditional', 'accept', 'conditional'],
  ])('gates %s, Critic %s: %s', (gates, critic, verdict) => {
    expect(finalVerdict(gates, critic)).toBe(verdict);
  });
});

describe('validatorCounts', () => {
  const validated = (id: string, verdict: GateVerdict): ValidatedFinding => {
    const agentFinding: AgentFinding = {
      finding: findingSchema.parse({
        id,
        claim: 'Average steps over the last 30 days',
        kind: 'scalar',
        feature: 'steps',
        target: null,
        numbers: { mean: 8412 },
        n: 30,
        window: 'the last 30 days',
      }),
      windowDays: 30,
      source: 'data_science',
    };
    return { ...agentFinding, verdict, gates: null, critic: null, assessment: null };
  };

  test('counts every finding once, by its final verdict', () => {
    expect(
      validatorCounts([
        validated('ds-001', 'validated'),
        validated('ds-002', 'rejected'),
        validated('ds-003', 'conditional'),
        validated('ds-004', 'rejected'),
        validated('ds-005', 'validated'),
        validated('ds-006', 'rejected'),
      ]),
    ).toEqual({ findings_total: 6, findings_validated: 2, findings_conditional: 1, findings_rejected: 3 });
  });

  test('no findings, all zeros', () => {
    expect(validatorCounts([])).toEqual({
      findings_total: 0,
      findings_validated: 0,
      findings_conditional: 0,
      findings_rejected: 0,
    });
  });
});
