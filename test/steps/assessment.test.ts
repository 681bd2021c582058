/**
 * The Assessment through the real LLM layer and the scripted model, inside Temporal's activity
 * context: mechanism, novelty and strategy grounded in the finding's priors, citations limited to
 * those priors, `null` (never a failed turn) when the model fails, and a refusal to assess a finding
 * the Critic rejected.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { findingSchema, type Finding } from '../../contracts/findings';
import { createAssessFinding, type AssessFindingInput, type Assessment } from '../../activities/steps/assessment';
import type { CriticVerdict } from '../../activities/steps/critic/verdict';
import { priorsFor } from '../../activities/data/literature-priors';
import type { StepDeps } from '../../activities/runtime/step-deps';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { startStepHarness, type StepHarness } from '../support/step-harness';

/** What the canned Assessment answers; each test that uses it sets it first. */
let cannedAnswer = '';
const cannedAssessment: ScriptedRule = { step: 'assessment', respond: () => ({ text: cannedAnswer }) };

let h: StepHarness;
let canned: StepHarness;
beforeAll(async () => {
  [h, canned] = await Promise.all([startStepHarness(), startStepHarness({ rules: [cannedAssessment] })]);
});
afterAll(async () => {
  await Promise.all([h?.close(), canned?.close()]);
});
afterEach(() => h.scripted.faults.clear());

const quietLogger = new DefaultLogger('ERROR');

function runAssessment(deps: StepDeps, input: AssessFindingInput): Promise<Assessment | null> {
  return new MockActivityEnvironment({}, { logger: quietLogger }).run(createAssessFinding(deps), input);
}

const finding = (overrides: Partial<Finding> = {}): Finding =>
  findingSchema.parse({
    id: 'ds-001',
    claim: 'Days with more steps have a better stress management score',
    kind: 'association',
    feature: 'steps',
    target: 'stress_management_score',
    numbers: { rho: 0.42 },
    n: 87,
    window: 'last 90 days',
    ...overrides,
  });

const verdict = (decision: CriticVerdict['decision'], findingId = 'ds-001'): CriticVerdict => ({
  finding_id: findingId,
  decision,
  concerns: decision === 'accept' ? [] : [{ category: 'noise', detail: 'bootstrap failed.', severity: 'medium' }],
  rationale: 'Reviewed.',
  fallback: false,
});

const assessmentRequests = (harness: StepHarness) =>
  harness.scripted.requests.entries().filter((r) => r.step === 'assessment');

test('an association with a prior for this very pair: its mechanism, established, a strategy for this week', async () => {
  const turnId = await h.newTurn();
  const steps = finding();

  const assessment = await runAssessment(h.deps, { turnId, finding: steps, critic: verdict('accept') });

  const pairPrior = priorsFor(steps)[0];
  expect(pairPrior.id).toBe('activity-mood-stress');
  expect(assessment).toEqual({
    mechanism: pairPrior.summary,
    novelty: 'established',
    strategy: expect.stringContaining('20-minute walk'),
    citations: [...new Set(priorsFor(steps).map((p) => p.source.citation))],
  });
  expect(assessment?.strategy).toContain('stress management score');
  const prompt = assessmentRequests(h).at(-1)?.messages[0].content;
  expect(prompt).toContain('CRITIC:\nDecision: accept');
  expect(prompt).toContain(`Citation: ${pairPrior.source.citation}`);
  // Optional colour: the Assessment announces nothing on the event stream.
  expect((await h.deps.events.readAfter(turnId, 0)).map((e) => e.type)).toEqual([]);
});

test('a downgraded trend is assessed too: supported by priors, a strategy naming the feature', async () => {
  const turnId = await h.newTurn();
  const trend = finding({
    id: 'ds-002',
    claim: 'Resting heart rate fell over the last 30 days',
    kind: 'trend',
    feature: 'resting_heart_rate',
    target: null,
    numbers: { effect: -4.1 },
  });

  const assessment = await runAssessment(h.deps, { turnId, finding: trend, critic: verdict('downgrade', 'ds-002') });

  expect(assessment).toMatchObject({ novelty: 'supported', strategy: expect.stringContaining('resting heart rate') });
  expect(assessment?.citations.length).toBeGreaterThan(0);
  expect(assessmentRequests(h).at(-1)?.messages[0].content).toContain('- noise (medium): bootstrap failed.');
});

test('no prior: an honest "no established mechanism known", user-specific, no citations', async () => {
  const turnId = await h.newTurn();
  const unmatched = finding({ id: 'ds-003', feature: 'awake_minutes', target: 'avg_heart_rate' });

  const assessment = await runAssessment(h.deps, { turnId, finding: unmatched, critic: verdict('accept', 'ds-003') });

  expect(assessment).toMatchObject({ novelty: 'user_specific', citations: [] });
  expect(assessment?.mechanism).toMatch(/no established mechanism known/i);
});

test('a scalar offers no lever and borrows no mechanism: strategy is null', async () => {
  const turnId = await h.newTurn();
  const scalar = finding({
    id: 'ds-004',
    claim: 'Average resting heart rate',
    kind: 'scalar',
    feature: 'resting_heart_rate',
    target: null,
    numbers: { mean: 60.4 },
  });

  const assessment = await runAssessment(h.deps, { turnId, finding: scalar, critic: verdict('accept', 'ds-004') });

  expect(assessment?.strategy).toBeNull();
  expect(assessment?.mechanism).toMatch(/implies no mechanism/);
});

test('citations are kept only when they are one of the priors, in the priors file wording, once each', async () => {
  const turnId = await canned.newTurn();
  const steps = finding();
  const [paluch, rebar] = ['steps-mortality', 'activity-mood-stress'].map(
    (id) => priorsFor(steps).find((p) => p.id === id)!.source.citation,
  );
  cannedAnswer = JSON.stringify({
    mechanism: 'Activity lowers stress.',
    novelty: 'supported',
    strategy: '   ',
    citations: [
      rebar,
      `${paluch.toUpperCase()} https://doi.org/10.1016/S2468-2667(21)00302-9`,
      'Invented A, Madeup B. Steps cure stress. J Imaginary Med. 2031;1:1-2.',
      'Rebar et al. 2015',
      rebar,
    ],
  });

  const assessment = await runAssessment(canned.deps, { turnId, finding: steps, critic: verdict('accept') });

  expect(assessment).toEqual({
    mechanism: 'Activity lowers stress.',
    novelty: 'supported',
    strategy: null,
    citations: [rebar, paluch],
  });
});

test('malformed output: null, so synthesis goes on without it', async () => {
  const turnId = await h.newTurn();
  h.scripted.faults.inject({ kind: 'malformed', step: 'assessment', times: 1 });

  const assessment = await runAssessment(h.deps, { turnId, finding: finding(), critic: verdict('accept') });

  expect(assessment).toBeNull();
  const rows = await h.database.db.llmCall.findMany({ where: { turnId } });
  expect(rows.map((r) => r.step)).toEqual(['assessment']);
});

test('an unavailable model API is transient: the activity fails, for Temporal to retry it', async () => {
  const turnId = await h.newTurn();
  h.scripted.faults.inject({ kind: 'server_error', step: 'assessment', times: 1 });

  await expect(runAssessment(h.deps, { turnId, finding: finding(), critic: verdict('accept') })).rejects.toMatchObject({
    name: 'UpstreamUnavailableError',
  });
});

test('a finding the Critic rejected is refused before any model call', async () => {
  const turnId = await h.newTurn();
  const before = assessmentRequests(h).length;

  await expect(runAssessment(h.deps, { turnId, finding: finding(), critic: verdict('reject') })).rejects.toThrow(
    /rejected by the Critic/,
  );

  expect(assessmentRequests(h)).toHaveLength(before);
});
