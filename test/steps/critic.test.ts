/**
 * The Critic through the real LLM layer and the scripted model, inside Temporal's activity context:
 * it follows the gates it is shown, its hard rules hold whatever the model says, malformed output and
 * an unavailable model yield a conservative downgrade, cancellation propagates, the validator.critic
 * event goes out once per finding, and the prompt carries the right priors and memory.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Info } from '@temporalio/activity';
import {
  findingSchema,
  gatesOutcomeSchema,
  HARD_GATES,
  type Finding,
  type GateName,
  type GateResult,
  type GatesOutcome,
} from '../../contracts/findings';
import { eventDataSchemas } from '../../contracts/event-data';
import {
  createCritiqueFinding,
  createRecordCriticFallback,
  type CritiqueFindingInput,
} from '../../activities/steps/critic';
import type { CriticVerdict } from '../../activities/steps/critic/verdict';
import { LITERATURE_PRIORS, priorsFor } from '../../activities/data/literature-priors';
import type { StepDeps } from '../../activities/runtime/step-deps';
import { createAnthropicClient, createLlm } from '../../platform/llm';
import { LlmCallAbortedError, UpstreamRequestError } from '../../platform/llm/errors';
import { defaultRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { startScriptedModelServer } from '../../dev/scripted-model/server';
import { CRITIC_SYSTEM } from '../../activities/steps/critic/prompt';
import { MEMORY_HEADING } from '../../activities/runtime/memory-injection';
import { expectSchema } from '../support/http';
import { startStepHarness, type StepHarness } from '../support/step-harness';

/** What the canned Critic answers; each hard-rule case sets it before running the activity. */
let cannedAnswer = '';
const cannedCritic: ScriptedRule = { step: 'critic', respond: () => ({ text: cannedAnswer }) };

let h: StepHarness;
let canned: StepHarness;
beforeAll(async () => {
  [h, canned] = await Promise.all([startStepHarness(), startStepHarness({ rules: [cannedCritic] })]);
});
afterAll(async () => {
  await Promise.all([h?.close(), canned?.close()]);
});
afterEach(() => h.scripted.faults.clear());

const quietLogger = new DefaultLogger('ERROR');

const activityEnvironment = (info: Partial<Info> = {}) => new MockActivityEnvironment(info, { logger: quietLogger });

/** Runs the Critic inside an activity context, as a worker would (attempt 1 unless `env` says otherwise). */
function runCritic(deps: StepDeps, input: CritiqueFindingInput, env = activityEnvironment()): Promise<CriticVerdict> {
  return env.run(createCritiqueFinding(deps), input);
}

const association = (overrides: Partial<Finding> = {}): Finding =>
  findingSchema.parse({
    id: 'ds-001',
    claim: 'Days with more steps have a better stress management score',
    kind: 'association',
    feature: 'steps',
    target: 'stress_management_score',
    numbers: { rho: 0.42, ci: [0.26, 0.57] },
    n: 87,
    window: 'last 90 days',
    ...overrides,
  });

type GateSpec = Pick<GateResult, 'verdict' | 'detail'>;

/** An association whose gates all pass; `detail.applicable` follows the verdict. */
const PASSING_ASSOCIATION: Record<GateName, GateSpec> = {
  reproduction: {
    verdict: 'passed',
    detail: { applicable: true, statistic: 'spearman', numbers: [{ key: 'rho', claimed: 0.42, recomputed: 0.42 }] },
  },
  sample_size: { verdict: 'passed', detail: { applicable: true, n: 87, min_required: 20 } },
  effect_vs_noise: {
    verdict: 'skipped',
    detail: { applicable: false, reason: 'applies to trend and scalar findings only' },
  },
  construct_validity: { verdict: 'passed', detail: { applicable: true, rho: 0.42, max_abs_rho: 0.85, n: 87 } },
  bootstrap: {
    verdict: 'passed',
    detail: { applicable: true, ci_low: 0.26, ci_high: 0.57, boot_median: 0.42, statistic: 'spearman_rho' },
  },
  subgroup_consistency: {
    verdict: 'passed',
    detail: { applicable: true, rho_first_half: 0.39, rho_second_half: 0.45 },
  },
  method_triangulation: { verdict: 'passed', detail: { applicable: true, rho: 0.42, tau: 0.29 } },
  discriminative_power: { verdict: 'passed', detail: { applicable: true, rho: 0.42, min_abs_rho: 0.1 } },
};

/**
 * The gates outcome for these results, aggregated as docs/design.md#verdict-aggregation says, and checked
 * against the contract.
 */
function gatesOutcome(findingId: string, changes: Partial<Record<GateName, GateSpec>> = {}): GatesOutcome {
  const gates = Object.entries({ ...PASSING_ASSOCIATION, ...changes }).map(([gate, spec]) => ({ gate, ...spec }));
  const failed = (name: string) => gates.some((g) => g.gate === name && g.verdict === 'failed');
  const applicable = gates.filter((g) => g.verdict !== 'skipped').length;
  const passes = gates.filter((g) => g.verdict === 'passed').length;
  const hard = HARD_GATES.find(failed) ?? null;
  let verdict = passes / applicable >= 0.85 ? 'validated' : passes / applicable >= 0.5 ? 'conditional' : 'rejected';
  if (hard !== null || (failed('bootstrap') && failed('discriminative_power'))) verdict = 'rejected';
  return gatesOutcomeSchema.parse({
    finding_id: findingId,
    gates,
    verdict,
    hard_rejection: hard,
    passes,
    applicable,
  });
}

const critique = (turnId: string, finding: Finding, gates = gatesOutcome(finding.id)): CritiqueFindingInput => ({
  turnId,
  finding,
  gates,
});

async function userOf(turnId: string, harness = h): Promise<string> {
  const { rows } = await harness.deps.pool.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [
    turnId,
  ]);
  return rows[0].user_id;
}

const criticEvents = async (harness: StepHarness, turnId: string) =>
  (await harness.deps.events.readAfter(turnId, 0)).filter((e) => e.type === 'validator.critic');

/** The user prompt of the last request the Critic sent. */
function lastCriticRequest(harness: StepHarness) {
  const request = harness.scripted.requests
    .entries()
    .filter((r) => r.step === 'critic')
    .at(-1);
  if (!request) throw new Error('no critic request was logged');
  return request;
}

function lastCriticPrompt(harness: StepHarness): string {
  const content = lastCriticRequest(harness).messages[0].content;
  if (typeof content !== 'string') throw new Error('no critic request was logged');
  return content;
}

/** The lines of one block of the prompt, between its header and the next blank line. */
const promptBlock = (prompt: string, header: string) => prompt.split(`${header}:\n`)[1].split('\n\n')[0].split('\n');

describe('following the gates', () => {
  test('all gates passed and a prior that agrees: accepted, and the verdict is announced once', async () => {
    const turnId = await h.newTurn();
    const finding = association();
    const env = activityEnvironment();
    let heartbeats = 0;
    env.on('heartbeat', () => heartbeats++);

    const verdict = await runCritic(h.deps, critique(turnId, finding), env);

    expect(verdict).toMatchObject({ finding_id: 'ds-001', decision: 'accept', concerns: [], fallback: false });
    expect(verdict.rationale).toContain('7 of 7 applicable gates passed');
    expect(heartbeats).toBeGreaterThan(0);
    const [event] = await criticEvents(h, turnId);
    expect(expectSchema(eventDataSchemas['validator.critic'], event.data)).toEqual({
      finding_id: 'ds-001',
      verdict: 'accept',
      reasoning: verdict.rationale,
      concerns: [],
    });
    const prompt = lastCriticPrompt(h);
    expect(promptBlock(prompt, 'GATES')).toEqual([
      'Gate verdict: validated (7 of 7 applicable gates passed; hard rejection: none)',
      '- reproduction: ✓ passed (statistic="spearman", numbers=[{"key":"rho","claimed":0.42,"recomputed":0.42}])',
      '- sample_size: ✓ passed (n=87, min_required=20)',
      '- effect_vs_noise: – skipped — reason: applies to trend and scalar findings only',
      '- construct_validity: ✓ passed (rho=0.42, max_abs_rho=0.85, n=87)',
      '- bootstrap: ✓ passed (ci_low=0.26, ci_high=0.57, boot_median=0.42, statistic="spearman_rho")',
      '- subgroup_consistency: ✓ passed (rho_first_half=0.39, rho_second_half=0.45)',
      '- method_triangulation: ✓ passed (rho=0.42, tau=0.29)',
      '- discriminative_power: ✓ passed (rho=0.42, min_abs_rho=0.1)',
    ]);
    expect(prompt).toContain('Numbers: rho=0.42, ci=[0.26, 0.57]');
  });

  test('a failed bootstrap and subgroup split are two medium noise concerns: downgraded', async () => {
    const turnId = await h.newTurn();
    const finding = association({ id: 'ds-002', numbers: { rho: 0.14 } });
    const gates = gatesOutcome(finding.id, {
      bootstrap: { verdict: 'failed', detail: { applicable: true, ci_low: -0.05, ci_high: 0.31, boot_median: 0.14 } },
      subgroup_consistency: {
        verdict: 'failed',
        detail: { applicable: true, rho_first_half: 0.3, rho_second_half: -0.04 },
      },
    });
    expect(gates.verdict).toBe('conditional');

    const verdict = await runCritic(h.deps, critique(turnId, finding, gates));

    expect(verdict.decision).toBe('downgrade');
    expect(verdict.fallback).toBe(false);
    expect(verdict.concerns.map((c) => [c.category, c.severity])).toEqual([
      ['noise', 'medium'],
      ['noise', 'medium'],
    ]);
    expect(verdict.concerns[0].detail).toContain('bootstrap');
    expect(promptBlock(lastCriticPrompt(h), 'GATES')).toContain(
      '- bootstrap: ✗ failed (ci_low=-0.05, ci_high=0.31, boot_median=0.14)',
    );
    const [event] = await criticEvents(h, turnId);
    expect(event.data).toMatchObject({ finding_id: 'ds-002', verdict: 'downgrade', concerns: verdict.concerns });
  });

  test('a construct_validity close to 0.85 is a high tautology concern: rejected', async () => {
    const turnId = await h.newTurn();
    const finding = association({
      id: 'ds-003',
      claim: 'Longer nights have more deep sleep',
      feature: 'sleep_minutes',
      target: 'deep_sleep_minutes',
      numbers: { rho: 0.84 },
    });
    const gates = gatesOutcome(finding.id, {
      construct_validity: { verdict: 'passed', detail: { applicable: true, rho: 0.84, max_abs_rho: 0.85, n: 87 } },
    });

    const verdict = await runCritic(h.deps, critique(turnId, finding, gates));

    expect(verdict.decision).toBe('reject');
    expect(verdict.concerns).toEqual([expect.objectContaining({ category: 'tautology', severity: 'high' })]);
  });

  test('fewer than 30 observations is a medium small_n concern: downgraded', async () => {
    const turnId = await h.newTurn();
    const finding = association({ id: 'ds-004', n: 24 });
    const gates = gatesOutcome(finding.id, {
      sample_size: { verdict: 'passed', detail: { applicable: true, n: 24, min_required: 20 } },
    });

    const verdict = await runCritic(h.deps, critique(turnId, finding, gates));

    expect(verdict.decision).toBe('downgrade');
    expect(verdict.concerns).toEqual([expect.objectContaining({ category: 'small_n', severity: 'medium' })]);
  });

  test('a prior about the same pair pointing the other way is a literature contradiction: downgraded', async () => {
    const turnId = await h.newTurn();
    const finding = association({
      id: 'ds-006',
      claim: 'Higher HRV goes with a higher resting heart rate',
      feature: 'heart_rate_variability',
      target: 'resting_heart_rate',
      numbers: { rho: 0.31 },
    });

    const verdict = await runCritic(h.deps, critique(turnId, finding));

    expect(verdict.decision).toBe('downgrade');
    expect(verdict.concerns).toEqual([
      expect.objectContaining({ category: 'literature_contradiction', severity: 'medium' }),
    ]);
    expect(verdict.concerns[0].detail).toContain('hrv-heart-rate');
  });

  test('an association no prior speaks for gets a low confounder concern and may still be accepted', async () => {
    const turnId = await h.newTurn();
    const finding = association({ id: 'ds-005', feature: 'awake_minutes', target: 'avg_heart_rate' });
    expect(priorsFor(finding)).toEqual([]);

    const verdict = await runCritic(h.deps, critique(turnId, finding));

    expect(verdict.decision).toBe('accept');
    expect(verdict.concerns).toEqual([expect.objectContaining({ category: 'confounder', severity: 'low' })]);
    expect(promptBlock(lastCriticPrompt(h), 'LITERATURE PRIORS')).toEqual([
      "- none match this finding's feature or target",
    ]);
  });
});

/** A description of the user's own data: by default the contract's example, an average resting heart rate. */
const description = (overrides: Partial<Finding> = {}): Finding =>
  findingSchema.parse({
    id: 'ds-001',
    claim: 'Average resting heart rate over the last 90 days',
    kind: 'scalar',
    feature: 'resting_heart_rate',
    target: null,
    numbers: { mean: 60.39, n: 86 },
    n: 86,
    window: 'the last 90 days',
    unit: 'bpm',
    ...overrides,
  });

const skippedGate = (gate: GateName, reason: string): GateResult => ({
  gate,
  verdict: 'skipped',
  detail: { applicable: false, reason },
});

/**
 * A description's gates as runGates reports them: reproduction, then the seven, of which an estimate (a
 * mean) is judged on sample_size and bootstrap and an exact record (a count) on none.
 */
function descriptionGates(finding: Finding, statistic: 'mean' | 'count'): GatesOutcome {
  const record = 'an exact record of the window estimates nothing from a sample';
  const estimate = statistic === 'mean';
  const passed = finding.n >= 10;
  const seven: GateResult[] = [
    estimate
      ? {
          gate: 'sample_size',
          verdict: passed ? 'passed' : 'failed',
          detail: { applicable: true, n: finding.n, min_required: 10 },
        }
      : skippedGate('sample_size', record),
    skippedGate('effect_vs_noise', 'a description reports a level of the window, not an effect'),
    skippedGate('construct_validity', 'applies to association findings only'),
    estimate
      ? {
          gate: 'bootstrap',
          verdict: 'passed',
          detail: { applicable: true, statistic, ci_low: 59.7, ci_high: 61.1, boot_median: 60.4 },
        }
      : skippedGate('bootstrap', record),
    skippedGate('subgroup_consistency', 'applies to association findings only'),
    skippedGate('method_triangulation', 'applies to association findings only'),
    skippedGate('discriminative_power', 'applies to association findings only'),
  ];
  const judged = estimate && !passed ? seven.slice(0, 1) : seven;
  const applicable = judged.filter((g) => g.verdict !== 'skipped');
  return gatesOutcomeSchema.parse({
    finding_id: finding.id,
    gates: [{ gate: 'reproduction', verdict: 'passed', detail: { applicable: true, statistic } }, ...judged],
    verdict: passed || !estimate ? 'validated' : 'rejected',
    hard_rejection: passed || !estimate ? null : 'sample_size',
    passes: applicable.filter((g) => g.verdict === 'passed').length,
    applicable: applicable.length,
  });
}

describe('a description of the user’s own data', () => {
  test('an average over 86 days: accepted as the descriptive summary it is, told it is a description', async () => {
    const turnId = await h.newTurn();
    const finding = description();

    const verdict = await runCritic(h.deps, {
      turnId,
      finding,
      statistic: 'mean',
      gates: descriptionGates(finding, 'mean'),
    });

    expect(verdict).toMatchObject({ decision: 'accept', concerns: [], fallback: false });
    expect(verdict.rationale).toContain(
      'A descriptive summary of 86 observations of your own data, not a causal claim',
    );
    expect(lastCriticPrompt(h)).toContain("Computed: mean (a description of the window's own data, not an inference)");
    const [event] = await criticEvents(h, turnId);
    expect(event.data).toMatchObject({ finding_id: 'ds-001', verdict: 'accept', concerns: [] });
  });

  test('an average over three weeks is a low small_n concern: it describes those days, and is still accepted', async () => {
    const turnId = await h.newTurn();
    const finding = description({ id: 'ds-002', n: 19, numbers: { mean: 61.2, n: 19 }, window: 'the last 21 days' });

    const verdict = await runCritic(h.deps, {
      turnId,
      finding,
      statistic: 'mean',
      gates: descriptionGates(finding, 'mean'),
    });

    expect(verdict.decision).toBe('accept');
    expect(verdict.concerns).toEqual([expect.objectContaining({ category: 'small_n', severity: 'low' })]);
  });

  test('an average of fewer than ten days failed its sample size: rejected, the small sample a high concern', async () => {
    const turnId = await h.newTurn();
    const finding = description({ id: 'ds-003', n: 7, numbers: { mean: 59.4, n: 7 }, window: 'the last 7 days' });

    const verdict = await runCritic(h.deps, {
      turnId,
      finding,
      statistic: 'mean',
      gates: descriptionGates(finding, 'mean'),
    });

    expect(verdict.decision).toBe('reject');
    expect(verdict.concerns).toEqual([expect.objectContaining({ category: 'small_n', severity: 'high' })]);
  });

  test('a count of three workouts is an exact record of its window: no small_n concern, accepted', async () => {
    const turnId = await h.newTurn();
    const finding = description({
      id: 'ds-004',
      claim: 'Runs over the last 7 days',
      feature: 'workouts',
      numbers: { count: 3, n: 3 },
      n: 3,
      window: 'the last 7 days',
      unit: null,
    });

    const verdict = await runCritic(h.deps, {
      turnId,
      finding,
      statistic: 'count',
      gates: descriptionGates(finding, 'count'),
    });

    expect(verdict).toMatchObject({ decision: 'accept', concerns: [] });
    expect(verdict.rationale).toContain('not a causal claim');
    expect(lastCriticPrompt(h)).toContain("Computed: count (a description of the window's own data, not an inference)");
  });
});

describe('hard rules, enforced on whatever the model answers', () => {
  const concern = (severity: string) => ({ category: 'confounder', detail: 'Weekday routine drives both.', severity });
  const answer = (decision: string, severities: string[]) =>
    JSON.stringify({ decision, concerns: severities.map(concern), rationale: 'The model says so.' });

  test.each([
    { said: 'accept', severities: ['high'], decision: 'downgrade' },
    { said: 'accept', severities: ['medium', 'medium'], decision: 'downgrade' },
    { said: 'accept', severities: ['low', 'high', 'low'], decision: 'downgrade' },
    { said: 'accept', severities: ['medium'], decision: 'accept' },
    { said: 'accept', severities: ['low'], decision: 'accept' },
    { said: 'reject', severities: ['high'], decision: 'reject' },
    { said: 'downgrade', severities: [], decision: 'downgrade' },
  ])('$said with $severities → $decision', async ({ said, severities, decision }) => {
    const turnId = await canned.newTurn();
    cannedAnswer = answer(said, severities);

    const verdict = await runCritic(canned.deps, critique(turnId, association()));

    expect(verdict.decision).toBe(decision);
    expect(verdict.concerns.map((c) => c.severity)).toEqual(severities);
    expect(verdict.fallback).toBe(false);
    const overruled = said !== decision;
    expect(verdict.rationale.startsWith('The model says so.')).toBe(true);
    expect(verdict.rationale.includes("Downgraded from accept by the Critic's hard rules")).toBe(overruled);
    const [event] = await criticEvents(canned, turnId);
    expect(event.data).toMatchObject({ verdict: decision, reasoning: verdict.rationale });
  });

  test('an answer in the wrong shape (an unknown concern category) is not trusted: downgrade, fallback', async () => {
    const turnId = await canned.newTurn();
    cannedAnswer = JSON.stringify({
      decision: 'accept',
      concerns: [{ category: 'vibes', detail: 'x', severity: 'low' }],
      rationale: 'Fine.',
    });

    const verdict = await runCritic(canned.deps, critique(turnId, association()));

    expect(verdict).toMatchObject({ decision: 'downgrade', fallback: true, concerns: [] });
  });
});

describe('when the model fails', () => {
  test('malformed output: a conservative downgrade, flagged as a fallback, announced as usual', async () => {
    const turnId = await h.newTurn();
    h.scripted.faults.inject({ kind: 'malformed', step: 'critic' });

    const verdict = await runCritic(h.deps, critique(turnId, association()));

    expect(verdict).toMatchObject({ finding_id: 'ds-001', decision: 'downgrade', concerns: [], fallback: true });
    expect(verdict.rationale).toContain('not a valid review');
    expect(verdict.rationale).toContain('downgraded rather than accepted');
    const [event] = await criticEvents(h, turnId);
    expect(event.data).toMatchObject({ verdict: 'downgrade', reasoning: verdict.rationale, concerns: [] });
  });

  test('an unavailable model API is transient: the activity fails for Temporal to retry, announcing nothing', async () => {
    const turnId = await h.newTurn();
    h.scripted.faults.inject({ kind: 'server_error', step: 'critic', times: 1 });

    await expect(runCritic(h.deps, critique(turnId, association()))).rejects.toMatchObject({
      name: 'UpstreamUnavailableError',
    });

    const rows = await h.database.db.llmCall.findMany({ where: { turnId } });
    expect(rows.map((r) => [r.step, r.outcome])).toEqual([['critic', 'server_error']]);
    expect(await criticEvents(h, turnId)).toHaveLength(0);
  });

  test('once the retry budget is spent: the conservative downgrade, announced once', async () => {
    const turnId = await h.newTurn();
    const fallback = createRecordCriticFallback(h.deps);

    const verdict = await fallback({ turnId, findingId: 'ds-001' });
    await fallback({ turnId, findingId: 'ds-001' }); // a retried bookkeeping activity

    expect(verdict).toMatchObject({ finding_id: 'ds-001', decision: 'downgrade', fallback: true, concerns: [] });
    expect(verdict.rationale).toContain('could not be reached');
    expect((await criticEvents(h, turnId)).map((e) => e.data)).toEqual([
      { finding_id: 'ds-001', verdict: 'downgrade', reasoning: verdict.rationale, concerns: [] },
    ]);
  });

  test('the Critic is given the turn’s memory at the top of its system prompt, and reads none itself', async () => {
    const turnId = await h.newTurn();
    // What memory holds now: written after the turn read its snapshot, so the Critic must not see it.
    await h.deps.pool.query(
      `INSERT INTO memory_entries (id, user_id, category, text) VALUES ($1, $2, 'preference', 'I work night shifts.')`,
      [`mem_${turnId.slice(5)}`, await userOf(turnId)],
    );
    const snapshot = '## Preferences\n- (2026-01-02) Mornings only for workouts.';
    const input = critique(turnId, association());

    await runCritic(h.deps, { ...input, memory: snapshot });
    const system = lastCriticRequest(h).system;
    expect(system).toBe(`${MEMORY_HEADING}\n${snapshot}\n\n${CRITIC_SYSTEM}`);
    expect(JSON.stringify(lastCriticRequest(h))).not.toContain('night shifts');

    // include_memory: false, or no memory at all: the snapshot is '', and the prompt has no memory.
    await runCritic(h.deps, { ...input, finding: association({ id: 'ds-002' }), memory: '' });
    expect(lastCriticRequest(h).system).toBe(CRITIC_SYSTEM);
    expect(JSON.stringify(lastCriticRequest(h))).not.toContain('night shifts');
  });

  test('cancellation propagates: no verdict, no event', async () => {
    const turnId = await h.newTurn();
    h.scripted.faults.inject({ kind: 'hang', step: 'critic' });
    const env = activityEnvironment();

    const running = runCritic(h.deps, critique(turnId, association()), env);
    while (h.scripted.faults.pending().length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    env.cancel();

    await expect(running).rejects.toBeInstanceOf(LlmCallAbortedError);
    expect(await criticEvents(h, turnId)).toEqual([]);
  });

  test('a request the model API refuses (misconfiguration) propagates instead of being papered over', async () => {
    const turnId = await h.newTurn();
    const ruleless = await startScriptedModelServer({ rules: defaultRules.filter((r) => r.step !== 'critic') });
    const llm = createLlm({
      anthropic: createAnthropicClient({ ANTHROPIC_BASE_URL: ruleless.url }),
      pool: h.deps.pool,
      events: h.deps.events,
      costWarnUsd: 100,
      sendStepInputs: true,
    });
    try {
      const running = runCritic({ ...h.deps, llm }, critique(turnId, association()));
      await expect(running).rejects.toBeInstanceOf(UpstreamRequestError);
    } finally {
      await ruleless.close();
    }
    expect(await criticEvents(h, turnId)).toEqual([]);
  });
});

test('running twice for the same finding (a Temporal retry) announces the retry but only one verdict', async () => {
  const turnId = await h.newTurn();
  const input = critique(turnId, association());

  const first = await runCritic(h.deps, input, activityEnvironment({ attempt: 1 }));
  const second = await runCritic(h.deps, input, activityEnvironment({ attempt: 2 }));

  expect(second).toEqual(first);
  const events = await h.deps.events.readAfter(turnId, 0);
  expect(events.filter((e) => e.type === 'validator.critic')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'step.retry').map((e) => e.data)).toEqual([
    expect.objectContaining({ step: 'critic', attempt: 2 }),
  ]);
});

test("the prompt carries exactly the priors matching the finding's feature or target, this pair's first", async () => {
  const turnId = await h.newTurn();

  await runCritic(h.deps, critique(turnId, association()));

  const priorIds = promptBlock(lastCriticPrompt(h), 'LITERATURE PRIORS').flatMap(
    (line) => /^- \[([\w-]+)\]/.exec(line)?.[1] ?? [],
  );
  const mentions = (name: string) => LITERATURE_PRIORS.filter((p) => p.feature === name || p.target === name);
  const expected = [...mentions('steps'), ...mentions('stress_management_score')].map((p) => p.id);
  expect([...priorIds].sort()).toEqual([...new Set(expected)].sort());
  expect(priorIds[0]).toBe('activity-mood-stress');
  expect(lastCriticPrompt(h)).toContain('Citation: Paluch AE, Bajpai S, Bassett DR, et al. Daily steps');
});

describe('priorsFor', () => {
  test.each([
    // Feature or target, either way round, case and separators aside.
    [{ feature: 'heart_rate_variability', target: 'resting_heart_rate' }, 'hrv-heart-rate'],
    [{ feature: 'Resting Heart Rate', target: null }, 'rhr-mortality'],
    [{ feature: 'ldl', target: null }, 'ldl-cardiovascular'],
    [{ feature: 'fasting_glucose', target: null }, 'sleep-debt-glucose'],
    [{ feature: 'steps_7d_avg', target: null }, 'steps-mortality'],
    [{ feature: 'awake_minutes', target: 'hrv_rhr_ratio' }, 'hrv-rhr-ratio-composite'],
  ])('%o finds %s', (finding, id) => {
    expect(priorsFor(finding).map((p) => p.id)).toContain(id);
  });

  test('a name no prior mentions finds none', () => {
    expect(priorsFor({ feature: 'average_cadence', target: null })).toEqual([]);
  });

  test.each([
    'steps',
    'sleep_minutes',
    'deep_sleep_minutes',
    'rem_sleep_minutes',
    'resting_heart_rate',
    'heart_rate_variability',
    'stress_management_score',
    'active_zone_minutes',
    'sleep_score',
    'hrv_rhr_ratio',
    'cardio_fitness_index',
    'ldl_cholesterol',
    'hdl_cholesterol',
    'triglycerides',
    'hba1c',
    'fasting_glucose',
    'vitamin_d',
    'ferritin',
    'hs_crp',
  ])('the priors cover %s, each with a dated citation', (metric) => {
    const priors = priorsFor({ feature: metric, target: null });
    expect(priors.length).toBeGreaterThan(0);
    for (const prior of priors) {
      expect(prior.source.citation.length).toBeGreaterThan(20);
      expect(prior.source.citation).toContain(String(prior.source.year));
    }
  });
});
