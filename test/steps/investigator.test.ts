/**
 * The Hypothesis Investigator (docs/design.md#hypothesis-investigator): the digest, Spearman and the
 * verdict augmentation are checked on hand-made data with known answers; the three activities run
 * for real (Postgres, the LLM layer, the scripted model, Temporal's activity context) on the demo data
 * set, whose planted effects the hypotheses must include and whose numbers the findings must match
 * when computed independently — here in the test, and by the Python gates on the series they build.
 * A hypothesis the user's memory says was tested is neither proposed nor tested again.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { AgentFinding, Finding, GateVerdict } from '../../contracts/findings';
import { factCheckReply } from '../../checks/fact-check';
import { buildFactSheet } from '../../checks/fact-sheet';
import {
  augmentBriefingWithVerdicts,
  averageRanks,
  computeDigest,
  createInvestigatorActivities,
  hypothesisToFinding,
  readProposals,
  renderDigest,
  spearman,
  topHypotheses,
  type Hypothesis,
} from '../../activities/agents/investigator';
import { recordTestedHypotheses } from '../../platform/memory';
import { DAILY_METRICS, type DailyMetric, type DailyRow, type WorkoutRow } from '../../contracts/health-records';
import { readUserHealthData } from '../../platform/health-data/store';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { INDEPENDENT_PAIR, PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';
import type { ValidatedFinding } from '../../activities/steps/run-gates';
import {
  investigatorBriefing,
  investigatorHypotheses,
  investigatorRules,
} from '../../dev/scripted-model/rules/investigator';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { startStepHarness, type StepHarness } from '../support/step-harness';

const DAY_MS = 86_400_000;
const END = '2025-03-28';

const isoDaysBefore = (end: string, days: number) =>
  new Date(Date.parse(`${end}T00:00:00Z`) - days * DAY_MS).toISOString().slice(0, 10);

/** Rows for the `count` days ending at END, oldest first; `values(daysBeforeEnd)` fills the metrics. */
function rows(count: number, values: (daysBeforeEnd: number) => Partial<DailyRow>): DailyRow[] {
  const empty = Object.fromEntries(DAILY_METRICS.map((m) => [m, null])) as Record<DailyMetric, null>;
  return Array.from({ length: count }, (_, i) => {
    const daysBeforeEnd = count - 1 - i;
    return { ...empty, date: isoDaysBefore(END, daysBeforeEnd), ...values(daysBeforeEnd) };
  });
}

function hypothesis(overrides: Partial<Hypothesis> & Pick<Hypothesis, 'kind' | 'feature_to_test'>): Hypothesis {
  return {
    id: 'h1',
    title: 'A claim',
    rationale: '',
    test_plan: '',
    data_required: [],
    missing_data_flag: false,
    expected_impact: 'medium',
    confidence: 0.5,
    next_action: '',
    target_to_test: null,
    ...overrides,
  };
}

/** |actual − exact| within half a unit of the last kept decimal: `actual` is `exact` rounded once. */
function expectRounded(actual: unknown, exact: number, decimals: number) {
  expect(typeof actual).toBe('number');
  expect(Math.abs((actual as number) - exact)).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-9);
}

// ---------------------------------------------------------------------------------------------------
// The digest

describe('computeDigest / renderDigest', () => {
  // 70 days ending 2025-03-28. Steps: 1000 in the last 30 days, 700 in the 30 before, 400 earlier.
  // RHR only on even days-before-end. Sleep: 400 on Mondays, 460 otherwise. HRV missing on 7 days;
  // one day has no row at all (days-before-end 40), so the period still spans 70 calendar days.
  const daily = rows(70, (d) => ({
    steps: d < 30 ? 1000 : d < 60 ? 700 : 400,
    resting_heart_rate: d % 2 === 0 ? 60 : null,
    sleep_minutes: new Date(`${isoDaysBefore(END, d)}T00:00:00Z`).getUTCDay() === 1 ? 400 : 460,
    heart_rate_variability: d < 7 ? null : 50 + (d % 3),
  })).filter((row) => row.date !== isoDaysBefore(END, 40));
  const workouts: WorkoutRow[] = [
    ...Array.from({ length: 12 }, (_, i) => ({
      date: isoDaysBefore(END, i),
      type: (['running', 'cycling', 'yoga', 'running'] as const)[i % 4],
      duration_minutes: 30 + i,
      calories: null,
      avg_heart_rate: null,
    })),
  ];
  const digest = computeDigest(daily, workouts);
  const metric = (name: DailyMetric) => digest.metrics.find((m) => m.metric === name)!;

  test('per metric: last 30 days vs the 30 before, mean ± sample SD over all days, change in SD units', () => {
    const steps = metric('steps');
    const all = daily.map((r) => r.steps!);
    const m = all.reduce((a, b) => a + b, 0) / all.length;
    const sd = Math.sqrt(all.reduce((a, b) => a + (b - m) ** 2, 0) / (all.length - 1));
    expect(steps).toEqual({
      metric: 'steps',
      recentMean: 1000,
      nRecent: 30,
      priorMean: 700,
      nPrior: 29, // the day without a row
      mean: m,
      sd,
      n: 69,
      deltaSd: 300 / sd,
    });
    expect(metric('resting_heart_rate')).toMatchObject({ recentMean: 60, nRecent: 15, sd: 0, deltaSd: null });
    expect(metric('deep_sleep_minutes')).toMatchObject({ n: 0, mean: null, sd: null, deltaSd: null });
    expect(digest.metrics.map((x) => x.metric)).toEqual([
      'steps',
      'sleep_minutes',
      'deep_sleep_minutes',
      'rem_sleep_minutes',
      'resting_heart_rate',
      'heart_rate_variability',
      'stress_management_score',
      'active_zone_minutes',
      'sleep_score',
    ]);
  });

  test('sleep by weekday (Monday first), presence over calendar days, workout types by sessions', () => {
    expect(digest.sleepByWeekday.map((d) => d.weekday)).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']);
    expect(digest.sleepByWeekday[0]).toEqual({ weekday: 'Mon', meanSleepMinutes: 400, n: 10 });
    expect(digest.sleepByWeekday.slice(1).every((d) => d.meanSleepMinutes === 460)).toBe(true);
    expect(digest.sleepByWeekday.reduce((a, d) => a + d.n, 0)).toBe(69);
    expect(digest).toMatchObject({ firstDate: '2025-01-18', lastDate: END, days: 70, workouts: 12 });
    expect(digest.presence).toEqual([
      { metric: 'heart_rate_variability', present: 62, days: 70, ratio: 62 / 70 },
      { metric: 'steps', present: 69, days: 70, ratio: 69 / 70 },
    ]);
    expect(digest.topWorkoutTypes).toEqual([
      { type: 'running', sessions: 6, meanMinutes: (30 + 33 + 34 + 37 + 38 + 41) / 6 },
      { type: 'cycling', sessions: 3, meanMinutes: (31 + 35 + 39) / 3 },
      { type: 'yoga', sessions: 3, meanMinutes: (32 + 36 + 40) / 3 },
    ]);
  });

  test('at most ten workout types', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({
      date: END,
      type: `sport${String(i).padStart(2, '0')}`,
      duration_minutes: 10,
      calories: null,
      avg_heart_rate: null,
    })) as unknown as WorkoutRow[];
    expect(computeDigest(daily, many).topWorkoutTypes.map((w) => w.type)).toEqual(
      Array.from({ length: 10 }, (_, i) => `sport${String(i).padStart(2, '0')}`),
    );
  });

  test('rendered: one line per metric with its rounded numbers, then weekdays, presence and workouts', () => {
    const text = renderDigest(digest);
    const sd = metric('steps').sd!;
    expect(text).toContain('Period: 2025-01-18 to 2025-03-28 (70 days), 12 workouts.');
    expect(text).toContain(
      `- steps (steps): last 30d 1000 (n=30) vs prior 30d 700 (n=29); overall ${Math.round(metric('steps').mean! * 10) / 10} ± ${Math.round(sd * 10) / 10} (n=69); change +${(300 / sd).toFixed(2)} SD`,
    );
    expect(text).toContain(
      '- resting_heart_rate (bpm): last 30d 60 (n=15) vs prior 30d 60 (n=14); overall 60 ± 0 (n=34); change n/a SD',
    );
    expect(text).toContain('- deep_sleep_minutes (min): no data');
    expect(text).toContain('Sleep minutes by day of week:\n- Mon: 400 (n=10)\n- Tue: 460 (n=10)');
    expect(text).toContain('- heart_rate_variability: 62/70 (0.89)\n- steps: 69/70 (0.99)');
    expect(text).toContain('- running: 6 sessions, 35.5 min');
    expect(renderDigest(computeDigest([], []))).toBe('No daily data.');
  });
});

// ---------------------------------------------------------------------------------------------------
// Spearman

describe('spearman', () => {
  // Reference values from scipy.stats.spearmanr.
  test('matches scipy on data without and with ties', () => {
    expect(spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])).toBeCloseTo(0.8207826816681233, 12);
    expect(spearman([10, 20, 20, 30, 40, 40, 40, 50], [3, 1, 2, 2, 5, 4, 6, 6])).toBeCloseTo(0.7889568540593018, 12);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
    expect(spearman([1, 2, 3, 4], [1, 4, 9, 16])).toBe(1);
  });

  test('ties share their average rank (scipy.stats.rankdata)', () => {
    expect(averageRanks([10, 20, 20, 30, 40, 40, 40, 50])).toEqual([1, 2.5, 2.5, 4, 6, 6, 6, 8]);
    expect(averageRanks([3, 1, 2])).toEqual([3, 1, 2]);
  });

  test('undefined for fewer than two pairs or a constant side; pairs must pair', () => {
    expect(spearman([1], [2])).toBeNull();
    expect(spearman([1, 2, 3], [5, 5, 5])).toBeNull();
    expect(() => spearman([1, 2], [1])).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------------
// Hypotheses: lenient reading, top K, and their findings

describe('readProposals / topHypotheses', () => {
  const valid = {
    id: 'h1',
    title: 'More active zone minutes, more deep sleep',
    confidence: 0.8,
    kind: 'association',
    feature_to_test: 'active_zone_minutes',
    target_to_test: 'deep_sleep_minutes',
  };

  test('keeps well-formed proposals (missing prose fields default), drops the rest with a reason', () => {
    const { hypotheses, dropped } = readProposals(
      [
        valid,
        { ...valid, confidence: 'very' },
        { ...valid, id: 'h3', kind: 'correlation' },
        { ...valid, id: 'h4', feature_to_test: 'cardio_fitness_index' },
        { ...valid, id: 'h5', target_to_test: null },
        { ...valid, id: 'h6', feature_to_test: 'deep_sleep_minutes', target_to_test: 'active_zone_minutes' },
        { ...valid, id: 'h7', kind: 'trend', feature_to_test: 'resting_heart_rate', target_to_test: 'steps' },
        { ...valid, id: 'h8', kind: 'trend', feature_to_test: 'steps', target_to_test: null },
        'not an object',
      ],
      [{ kind: 'trend', feature: 'steps', target: null }],
    );
    expect(hypotheses.map((h) => h.id)).toEqual(['h1', 'h7']);
    expect(hypotheses[0]).toEqual({
      id: 'h1',
      title: valid.title,
      rationale: '',
      test_plan: '',
      data_required: [],
      missing_data_flag: false,
      expected_impact: '',
      confidence: 0.8,
      next_action: '',
      kind: 'association',
      feature_to_test: 'active_zone_minutes',
      target_to_test: 'deep_sleep_minutes',
    });
    // A trend has no target, whatever the model wrote.
    expect(hypotheses[1]).toMatchObject({ kind: 'trend', feature_to_test: 'resting_heart_rate', target_to_test: null });
    expect(dropped.map((d) => [d.index, d.reason])).toEqual([
      [1, 'malformed'],
      [2, 'malformed'],
      [3, 'not_a_daily_metric'],
      [4, 'malformed'], // an association without a target
      [5, 'duplicate'], // the mirror image of h1: Spearman is symmetric
      [7, 'already_tested'],
      [8, 'malformed'],
    ]);
  });

  test('an already-tested association is dropped in either direction', () => {
    const tested = [{ kind: 'association' as const, feature: 'deep_sleep_minutes', target: 'active_zone_minutes' }];
    expect(readProposals([valid], tested).dropped).toEqual([
      { index: 0, reason: 'already_tested', detail: 'inv-association-active_zone_minutes-deep_sleep_minutes' },
    ]);
    expect(readProposals([valid], [{ ...tested[0], kind: 'trend' }]).hypotheses).toHaveLength(1);
  });

  test('the top three by confidence, the model order breaking ties', () => {
    const hs = [0.5, 0.9, 0.7, 0.9, 0.2].map((confidence, i) =>
      hypothesis({ id: `h${i + 1}`, confidence, kind: 'scalar', feature_to_test: 'steps' }),
    );
    expect(topHypotheses(hs).map((h) => h.id)).toEqual(['h2', 'h4', 'h3']);
  });
});

describe('hypothesisToFinding', () => {
  // 60 days: steps 1000 + d in the last 30 days, 500 + d before; deep sleep falls with d except on ties.
  const daily = rows(60, (d) => ({
    steps: d < 30 ? 1000 + d : 500 + d,
    deep_sleep_minutes: d === 5 ? null : 100 - Math.floor(d / 2),
  }));

  test('association: Spearman over the days with both values, stable id, all days', () => {
    const out = hypothesisToFinding(
      hypothesis({
        kind: 'association',
        feature_to_test: 'steps',
        target_to_test: 'deep_sleep_minutes',
        title: 'Steps and deep sleep',
        rationale: 'Because.',
      }),
      daily,
    );
    const kept = daily.filter((r) => r.deep_sleep_minutes !== null);
    const rho = spearman(
      kept.map((r) => r.steps!),
      kept.map((r) => r.deep_sleep_minutes!),
    )!;
    expect(out).toEqual({
      ok: true,
      finding: {
        finding: {
          id: 'inv-association-steps-deep_sleep_minutes',
          claim: 'Steps and deep sleep',
          kind: 'association',
          feature: 'steps',
          target: 'deep_sleep_minutes',
          numbers: { rho: Math.round(rho * 1000) / 1000, n: 59 },
          n: 59,
          window: 'all available days',
          unit: null,
          mechanism: 'Because.',
        },
        windowDays: null,
        source: 'investigator',
      },
    });
  });

  test('trend: last 30 days vs the 30 before, effect from the unrounded means; scalar: mean, SD, n', () => {
    const trend = hypothesisToFinding(hypothesis({ kind: 'trend', feature_to_test: 'steps' }), daily);
    expect(trend).toMatchObject({
      ok: true,
      finding: {
        finding: {
          id: 'inv-trend-steps',
          target: null,
          numbers: { recent_mean: 1014.5, prior_mean: 544.5, effect: 470 },
          n: 60,
          window: 'the last 30 days vs the 30 days before',
          unit: 'steps',
        },
        windowDays: 30,
      },
    });
    const scalar = hypothesisToFinding(hypothesis({ kind: 'scalar', feature_to_test: 'steps' }), daily);
    const values = daily.map((r) => r.steps!);
    const m = values.reduce((a, b) => a + b, 0) / 60;
    const sd = Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / 59);
    expect(scalar).toMatchObject({
      ok: true,
      finding: {
        finding: { id: 'inv-scalar-steps', numbers: { mean: 779.5, sd: Math.round(sd * 100) / 100, n: 60 } },
        windowDays: null,
      },
    });
  });

  test('untestable data is reported, not turned into a finding', () => {
    expect(
      hypothesisToFinding(
        hypothesis({ kind: 'association', feature_to_test: 'steps', target_to_test: 'sleep_score' }),
        daily,
      ),
    ).toEqual({ ok: false, reason: 'too_few_days', n: 0 });
    const flat = rows(40, () => ({ steps: 5000, sleep_score: 80 }));
    expect(
      hypothesisToFinding(
        hypothesis({ kind: 'association', feature_to_test: 'steps', target_to_test: 'sleep_score' }),
        flat,
      ),
    ).toEqual({ ok: false, reason: 'constant', n: 40 });
    expect(
      hypothesisToFinding(
        hypothesis({ kind: 'trend', feature_to_test: 'steps' }),
        rows(20, () => ({ steps: 1 })),
      ),
    ).toEqual({
      ok: false,
      reason: 'too_few_days',
      n: 20,
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// The verdict augmentation

function tested(id: string, claim: string, numbers: Finding['numbers'], verdict: GateVerdict): ValidatedFinding {
  return {
    finding: {
      id,
      claim,
      kind: 'scalar',
      feature: 'steps',
      target: null,
      numbers,
      n: 90,
      window: 'all available days',
    },
    windowDays: null,
    source: 'investigator',
    verdict,
    gates: null,
    critic: null,
    assessment: null,
  };
}

describe('augmentBriefingWithVerdicts', () => {
  const findings = [
    tested('inv-a', 'More active zone minutes, more deep sleep', { rho: 0.512, n: 170 }, 'validated'),
    tested('inv-b', 'Steps and REM sleep', { rho: 0.0571, n: 168 }, 'rejected'),
    tested(
      'inv-c',
      'Resting heart rate is falling',
      { recent_mean: 60.53, prior_mean: 64.04, effect: -3.51 },
      'conditional',
    ),
  ];

  test('✓ for validated, ~ for conditional, numbers exactly as in the findings, rejected ones not listed', () => {
    const out = augmentBriefingWithVerdicts('Your data has a clear pattern.\n', findings);
    expect(out).toBe(
      [
        'Your data has a clear pattern.',
        '',
        '_Auto-tested findings:_',
        '- ✓ More active zone minutes, more deep sleep (validated): rho = 0.512, n = 170',
        '- ~ Resting heart rate is falling (conditional, a preliminary signal): recent mean = 60.53, prior mean = 64.04, effect = -3.51',
      ].join('\n'),
    );
    expect(out).not.toContain('REM');
    expect(out).not.toContain('0.0571');
    // Every number in it traces to the Fact Sheet those findings make.
    const { sheet } = buildFactSheet(findings);
    expect(factCheckReply(out, sheet, '')).toEqual([]);
  });

  test('nothing survived: a note that the patterns may be noise; nothing tested: a note that nothing could be', () => {
    const rejected = findings.map((f) => ({ ...f, verdict: 'rejected' as const }));
    expect(augmentBriefingWithVerdicts('Some patterns.', rejected)).toBe(
      'Some patterns.\n\n_Auto-tested findings:_ none of the three tested hypotheses survived validation, so the patterns noticed above may be noise.',
    );
    expect(augmentBriefingWithVerdicts('', [])).toBe(
      '_Auto-tested findings:_ no hypothesis could be tested on your data, so the patterns noticed above are unconfirmed and may be noise.',
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The activities, for real

/** The scripted hypotheses rule as a model that ignores what was already tested. */
const forgetfulHypotheses: ScriptedRule<'investigator_hypotheses'> = {
  step: 'investigator_hypotheses',
  respond: (req) => investigatorHypotheses.respond({ ...req, inputs: { ...req.inputs, tested: [] } }),
};

let h: StepHarness;
let forgetful: StepHarness;
beforeAll(async () => {
  [h, forgetful] = await Promise.all([
    startStepHarness({ rules: investigatorRules }),
    startStepHarness({ rules: [forgetfulHypotheses, investigatorBriefing] }),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), forgetful?.close()]);
});
beforeEach(() => {
  for (const harness of [h, forgetful]) harness.scripted.requests.clear();
  warnings = [];
});

let warnings: string[] = [];
const recordingLogger = new DefaultLogger('WARN', (entry: LogEntry) => {
  if (entry.level === 'WARN') warnings.push(entry.message);
});

function run<A extends unknown[], R>(activity: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment({}, { logger: recordingLogger }).run(activity, ...args);
}

const QUESTION = 'Is anything interesting going on in my data?';

/** A turn whose user has the demo data set ending on a fixed day, so every run sees the same rows. */
async function demoTurn(harness: StepHarness) {
  const turnId = await harness.newTurn();
  const { userId } = await harness.database.db.turn.findUniqueOrThrow({ where: { id: turnId } });
  await seedDemoHealthData(harness.deps.pool, userId, { endDate: new Date(`${END}T00:00:00Z`) });
  return { turnId, userId, activities: createInvestigatorActivities(harness.deps) };
}

const promptOf = (harness: StepHarness, step: string) => {
  const requests = harness.scripted.requests.entries().filter((r) => r.step === step);
  expect(requests).toHaveLength(1);
  return { model: requests[0].model, prompt: String(requests[0].messages[0].content) };
};

const keyOf = (h: Pick<Hypothesis, 'kind' | 'feature_to_test' | 'target_to_test'>) =>
  `${h.kind}:${h.feature_to_test}:${h.target_to_test}`;

// Independent of checks/statistics.ts: ranks by counting, windows by date strings.
function naiveRanks(values: number[]): number[] {
  return values.map((v) => values.filter((w) => w < v).length + (values.filter((w) => w === v).length + 1) / 2);
}
function naiveSpearman(x: number[], y: number[]): number {
  const [rx, ry] = [naiveRanks(x), naiveRanks(y)];
  const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / a.length;
  const [mx, my] = [mean(rx), mean(ry)];
  const cov = rx.reduce((s, v, i) => s + (v - mx) * (ry[i] - my), 0);
  const vx = rx.reduce((s, v) => s + (v - mx) ** 2, 0);
  const vy = ry.reduce((s, v) => s + (v - my) ** 2, 0);
  return cov / Math.sqrt(vx * vy);
}

describe('proposeHypotheses', () => {
  test('the digest of the rows goes to the main model; the planted effects and one non-effect come back', async () => {
    const { turnId, userId, activities } = await demoTurn(h);
    const out = await run(activities.proposeHypotheses, { turnId, userId, question: QUESTION });

    const { daily, workouts } = await readUserHealthData(h.deps.pool, userId);
    expect(out.digest).toBe(renderDigest(computeDigest(daily, workouts)));
    const { model, prompt } = promptOf(h, 'investigator_hypotheses');
    expect(model).toBe(h.deps.models.main);
    expect(prompt).toContain(`QUESTION:\n${QUESTION}\n\nDIGEST:\n${out.digest}\n\nALREADY TESTED:\n(none)`);

    const proposed = out.hypotheses.map(keyOf);
    for (const effect of PLANTED_EFFECTS)
      expect(proposed).toContain(`${effect.kind}:${effect.feature}:${effect.target}`);
    expect(proposed).toContain(`association:${INDEPENDENT_PAIR.feature}:${INDEPENDENT_PAIR.target}`);
    // The planted effects rank above the non-effect.
    const nonEffect = out.hypotheses.find((x) => x.target_to_test === INDEPENDENT_PAIR.target)!;
    expect(out.hypotheses.filter((x) => x !== nonEffect).every((x) => x.confidence > nonEffect.confidence)).toBe(true);

    expect(out.costUsd).toBeGreaterThan(0);
    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'agent.started', data: { agent: 'investigator', question: QUESTION } });
    expect(events[0].data.at).toBe(out.startedAt);
  });

  test('a hypothesis memory says was tested is not proposed, so it is not tested again: the next one is', async () => {
    const { turnId, userId, activities } = await demoTurn(h);
    const before = await run(activities.proposeHypotheses, { turnId, userId, question: QUESTION });
    const firstTop = (await run(activities.testHypotheses, { turnId, userId, hypotheses: before.hypotheses })).findings;
    const remembered = firstTop[0];
    expect(remembered.finding.id).toBe('inv-association-active_zone_minutes-deep_sleep_minutes');

    // Memory, as step 8 writes it after validation (docs/design.md#memory).
    await recordTestedHypotheses(h.deps.pool, {
      userId,
      turnId,
      entries: [
        {
          text: remembered.finding.claim,
          confidence: 0.9,
          meta: {
            finding_id: remembered.finding.id,
            feature: remembered.finding.feature,
            target: remembered.finding.target,
            verdict: 'validated',
            effect: remembered.finding.numbers.rho as number,
            tested: `association|${remembered.finding.feature}|${remembered.finding.target}|${remembered.finding.window}`,
          },
        },
      ],
    });
    h.scripted.requests.clear();
    const next = await h.newTurn();
    await h.database.db.turn.update({ where: { id: next }, data: { userId } });
    const after = await run(activities.proposeHypotheses, { turnId: next, userId, question: QUESTION });

    const { prompt } = promptOf(h, 'investigator_hypotheses');
    expect(prompt).toContain(
      `ALREADY TESTED:\n- [validated] association: active_zone_minutes → deep_sleep_minutes (effect ${remembered.finding.numbers.rho}): ${remembered.finding.claim}`,
    );
    expect(after.hypotheses.map(keyOf)).not.toContain('association:active_zone_minutes:deep_sleep_minutes');
    expect(after.hypotheses).toHaveLength(before.hypotheses.length - 1);

    const { findings } = await run(activities.testHypotheses, { turnId: next, userId, hypotheses: after.hypotheses });
    expect(findings.map((f) => f.finding.id)).toEqual([
      ...firstTop.slice(1).map((f) => f.finding.id),
      'inv-association-heart_rate_variability-resting_heart_rate',
    ]);
    // The model was told, so the deterministic drop had nothing to do.
    expect(warnings).toEqual([]);

    // include_memory: false isolates the turn from memory, tested hypotheses included.
    h.scripted.requests.clear();
    const isolated = await h.newTurn();
    await h.database.db.turn.update({ where: { id: isolated }, data: { userId } });
    const blind = await run(activities.proposeHypotheses, {
      turnId: isolated,
      userId,
      question: QUESTION,
      includeMemory: false,
    });
    expect(promptOf(h, 'investigator_hypotheses').prompt).not.toContain('[validated]');
    expect(blind.hypotheses.map(keyOf)).toContain('association:active_zone_minutes:deep_sleep_minutes');
  });

  test('defence in depth: a model that proposes a tested hypothesis anyway has it dropped, with a warning', async () => {
    const { turnId, userId, activities } = await demoTurn(forgetful);
    await recordTestedHypotheses(forgetful.deps.pool, {
      userId,
      turnId,
      entries: [
        {
          text: 'Resting heart rate has been falling',
          confidence: 0.6,
          meta: {
            finding_id: 'inv-trend-resting_heart_rate',
            feature: 'resting_heart_rate',
            target: null,
            verdict: 'conditional',
            effect: -3.5,
            tested: 'trend|resting_heart_rate|-|the last 60 days',
          },
        },
        {
          // Written by the Data Science agent: no kind in its id, but a target makes it an association.
          text: 'Steps and stress',
          confidence: 0.9,
          meta: {
            finding_id: 'ds-001',
            feature: 'stress_management_score',
            target: 'steps',
            verdict: 'validated',
            effect: 0.4,
            tested: 'association|stress_management_score|steps|the last 90 days',
          },
        },
      ],
    });
    const out = await run(activities.proposeHypotheses, { turnId, userId, question: QUESTION });

    const { prompt } = promptOf(forgetful, 'investigator_hypotheses');
    expect(prompt).toContain(
      '- [conditional] trend: resting_heart_rate (effect -3.5): Resting heart rate has been falling',
    );
    expect(prompt).toContain(
      '- [validated] association: stress_management_score → steps (effect 0.4): Steps and stress',
    );
    const proposed = out.hypotheses.map(keyOf);
    expect(proposed).not.toContain('trend:resting_heart_rate:null');
    expect(proposed).not.toContain('association:steps:stress_management_score');
    expect(proposed).toContain('association:active_zone_minutes:deep_sleep_minutes');
    expect(warnings).toEqual([expect.stringMatching(/already tested were dropped/)]);
  });
});

describe('testHypotheses', () => {
  test('the top three become findings whose numbers an independent computation on the rows reproduces', async () => {
    const { turnId, userId, activities } = await demoTurn(h);
    const { hypotheses } = await run(activities.proposeHypotheses, { turnId, userId, question: QUESTION });
    h.scripted.requests.clear();
    const { findings } = await run(activities.testHypotheses, { turnId, userId, hypotheses });

    // No model call: the numbers are computed, not asked for.
    expect(h.scripted.requests.entries()).toHaveLength(0);
    expect(findings.map((f) => f.finding.id)).toEqual([
      'inv-association-active_zone_minutes-deep_sleep_minutes',
      'inv-trend-resting_heart_rate',
      'inv-association-steps-stress_management_score',
    ]);
    const { daily } = await readUserHealthData(h.deps.pool, userId);
    for (const { finding, windowDays, source } of findings) {
      const hyp = hypotheses.find((x) => x.title === finding.claim)!;
      expect(source).toBe('investigator');
      expect([finding.kind, finding.feature, finding.target]).toEqual([
        hyp.kind,
        hyp.feature_to_test,
        hyp.target_to_test,
      ]);
      const feature = finding.feature as DailyMetric;
      if (finding.kind === 'association') {
        const both = daily.filter((r) => r[feature] !== null && r[finding.target as DailyMetric] !== null);
        const rho = naiveSpearman(
          both.map((r) => r[feature]!),
          both.map((r) => r[finding.target as DailyMetric]!),
        );
        expectRounded(finding.numbers.rho, rho, 3);
        expect(finding.numbers.n).toBe(both.length);
        expect(finding.n).toBe(both.length);
        expect(windowDays).toBeNull();
      } else {
        const last = daily.at(-1)!.date;
        const recent = daily.filter((r) => r.date > isoDaysBefore(last, 30) && r[feature] !== null);
        const prior = daily.filter(
          (r) => r.date > isoDaysBefore(last, 60) && r.date <= isoDaysBefore(last, 30) && r[feature] !== null,
        );
        const avg = (rs: DailyRow[]) => rs.reduce((s, r) => s + r[feature]!, 0) / rs.length;
        expectRounded(finding.numbers.recent_mean, avg(recent), 2);
        expectRounded(finding.numbers.prior_mean, avg(prior), 2);
        expectRounded(finding.numbers.effect, avg(recent) - avg(prior), 2);
        expect(finding.n).toBe(recent.length + prior.length);
        expect(windowDays).toBe(30);
      }
    }
  });

  test('the gates, building their own series in Python, see the same days and the same ρ and effect', async () => {
    const { turnId, userId, activities } = await demoTurn(h);
    const { hypotheses } = await run(activities.proposeHypotheses, { turnId, userId, question: QUESTION });
    const { findings } = await run(activities.testHypotheses, { turnId, userId, hypotheses });
    const { daily } = await readUserHealthData(h.deps.pool, userId);
    const built = await h.deps.gates.buildSeries(
      { daily },
      findings.map(({ finding, windowDays }) => ({ finding, windowDays })),
    );
    expect(built.every((b) => b.missingColumns.length === 0)).toBe(true);
    const outcomes = await h.deps.gates.run(built.map((b) => b.series));

    for (const [i, { finding }] of findings.entries()) {
      const detail = (gate: string) => outcomes[i].gates.find((g) => g.gate === gate)?.detail;
      expect(detail('sample_size')).toMatchObject({ n: finding.n });
      if (finding.kind === 'association') {
        expectRounded(finding.numbers.rho, detail('construct_validity')!.rho as number, 3);
      } else {
        expectRounded(finding.numbers.effect, detail('effect_vs_noise')!.effect as number, 2);
      }
    }
    // The planted active-zone-minutes → deep-sleep effect is real, so it is not rejected.
    expect(outcomes[0].verdict).not.toBe('rejected');
  });
});

describe('writeBriefing', () => {
  async function briefingInput(harness: StepHarness, verdicts: GateVerdict[]) {
    const { turnId, userId, activities } = await demoTurn(harness);
    const proposed = await run(activities.proposeHypotheses, { turnId, userId, question: QUESTION });
    const { findings } = await run(activities.testHypotheses, { turnId, userId, hypotheses: proposed.hypotheses });
    const validated: ValidatedFinding[] = findings.map((f: AgentFinding, i) => ({
      ...f,
      verdict: verdicts[i],
      gates: null,
      critic: null,
      assessment: null,
    }));
    harness.scripted.requests.clear();
    return { turnId, activities, proposed, validated };
  }

  test('streams the briefing as investigator thoughts, appends the verdicts, completes with the total cost', async () => {
    const { turnId, activities, proposed, validated } = await briefingInput(h, [
      'validated',
      'conditional',
      'rejected',
    ]);
    const out = await run(activities.writeBriefing, {
      turnId,
      question: QUESTION,
      digest: proposed.digest,
      hypotheses: proposed.hypotheses,
      validated,
      startedAt: proposed.startedAt,
      costUsd: proposed.costUsd,
    });

    const { model, prompt } = promptOf(h, 'investigator_briefing');
    expect(model).toBe(h.deps.models.main);
    const [v, c, r] = validated.map((x) => x.finding);
    expect(prompt).toContain(`- [VALIDATED] ${v.claim}: rho = ${v.numbers.rho}, n = ${v.numbers.n}`);
    expect(prompt).toContain(`- [CONDITIONAL] ${c.claim}: recent mean = ${c.numbers.recent_mean}`);
    expect(prompt).toContain(`- ${r.claim} (tested, did not hold up)`);
    expect(prompt).not.toContain(`rho = ${r.numbers.rho}`);
    expect(prompt).toContain('(not tested yet)');

    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.map((e) => e.type).filter((t) => t !== 'agent.thought')).toEqual([
      'agent.started',
      'agent.completed',
    ]);
    const thoughts = events.filter((e) => e.type === 'agent.thought');
    expect(thoughts.length).toBeGreaterThan(0);
    expect(thoughts.every((e) => e.data.agent === 'investigator' && e.data.attempt === 1)).toBe(true);
    // The briefing streamed whole, the verdicts after the model's text included: the deltas, concatenated, are it.
    const shown = thoughts.map((e) => e.data.delta).join('');
    expect(out.briefing).toBe(shown);
    const modelText = shown.slice(0, shown.indexOf('_Auto-tested findings:_')).trimEnd();
    expect(out.briefing).toBe(augmentBriefingWithVerdicts(modelText, validated));
    expect(out.briefing).toContain(`- ✓ ${v.claim} (validated): rho = ${v.numbers.rho}`);
    expect(out.briefing).toContain(`- ~ ${c.claim} (conditional`);
    expect(out.briefing).not.toContain(`- ✓ ${r.claim}`);
    // The scripted briefing quotes a validated number; every number in the answer traces to the Fact Sheet.
    expect(modelText).toContain(`rho = ${v.numbers.rho}`);
    expect(factCheckReply(out.briefing, buildFactSheet(validated).sheet, QUESTION)).toEqual([]);

    const calls = await h.database.db.llmCall.findMany({ where: { turnId } });
    expect(calls.map((x) => x.step).sort()).toEqual(['investigator_briefing', 'investigator_hypotheses']);
    const ledger = calls.reduce((sum, x) => sum + x.costUsd.toNumber(), 0);
    expect(out.costUsd).toBeCloseTo(ledger, 5);
    expect(out.costUsd).toBeGreaterThan(proposed.costUsd);
    expect(events.at(-1)).toMatchObject({
      type: 'agent.completed',
      data: { agent: 'investigator', cost_usd: out.costUsd, output_summary: out.briefing.slice(0, 160) },
    });
  });

  test('when nothing survived: a briefing without numbers and the note that the patterns may be noise', async () => {
    const { turnId, activities, proposed, validated } = await briefingInput(h, ['rejected', 'rejected', 'rejected']);
    const out = await run(activities.writeBriefing, {
      turnId,
      question: QUESTION,
      digest: proposed.digest,
      hypotheses: proposed.hypotheses,
      validated,
      startedAt: proposed.startedAt,
      costUsd: proposed.costUsd,
    });
    const { prompt } = promptOf(h, 'investigator_briefing');
    expect(prompt).toContain('VALIDATED FINDINGS:\n(none)');
    expect(out.briefing).toMatch(/_Auto-tested findings:_ none of the three tested hypotheses survived validation/);
    expect(out.briefing).not.toMatch(/[✓~] /);
    expect(factCheckReply(out.briefing, buildFactSheet(validated).sheet, QUESTION)).toEqual([]);
  });
});
