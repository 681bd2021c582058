/**
 * Synthesis (step 7) and the fact-check (7b) through the real LLM layer and the scripted model:
 * the answer is built from the fact sheet, conditional findings are hedged, rejected ones never
 * appear, a DS failure yields no numbers, and the fact_check event reports what does not trace.
 */
import { createSynthesise, type SynthesisFinding, type SynthesisInput } from '../../activities/steps/synthesis';
import { startStepHarness, type StepHarness } from '../support/step-harness';

let h: StepHarness;
beforeAll(async () => {
  h = await startStepHarness();
});
afterAll(async () => {
  await h?.close();
});

const finding = (
  id: string,
  claim: string,
  numbers: Record<string, number | [number, number]>,
  verdict: SynthesisFinding['verdict'],
  unit: string | null = null,
): SynthesisFinding => ({
  finding: { id, claim, numbers, n: 88, window: 'last 90 days', unit },
  verdict,
  source: 'data_science',
});

const input = (turnId: string, findings: SynthesisFinding[], dataScienceFailed = false): SynthesisInput => ({
  turnId,
  userMessage: 'What is my average resting heart rate over the last 90 days?',
  mainAgent: 'data_science',
  mainAgentDraft: '',
  supportingInsights: '',
  expertProse: '',
  findings,
  anchors: [],
  dataScienceFailed,
});

test('the answer cites fact-sheet numbers only; the fact check finds nothing to flag', async () => {
  const turnId = await h.newTurn();
  const out = await h.run(
    createSynthesise(h.deps),
    input(turnId, [
      finding(
        'ds-001',
        'Your average resting heart rate over the last 90 days',
        { mean: 60.3912, n: 88 },
        'validated',
        'bpm',
      ),
    ]),
  );
  expect(out.answer).toContain('60.39');
  expect(out.factCheckIssues).toEqual([]);
  expect(out.factSheet.map((e) => [e.claim, e.value])).toEqual([
    ['ds-001.mean', 60.3912],
    ['ds-001.n', 88],
  ]);
  const events = await h.deps.events.readAfter(turnId, 0);
  expect(events.map((e) => e.type)).toEqual(
    expect.arrayContaining(['agent.started', 'agent.thought', 'agent.completed', 'fact_check']),
  );
  expect(events.find((e) => e.type === 'fact_check')?.data).toEqual({ issues: [] });
  expect(
    events
      .filter((e) => e.type === 'agent.thought')
      .map((e) => e.data.delta)
      .join(''),
  ).toBe(out.answer);
});

test('conditional findings are hedged and rejected findings never reach the answer or the sheet', async () => {
  const turnId = await h.newTurn();
  const out = await h.run(
    createSynthesise(h.deps),
    input(turnId, [
      finding('ds-001', 'More active minutes go with more deep sleep', { rho: 0.42, ci: [0.3, 0.55] }, 'conditional'),
      finding('ds-002', 'Steps go with REM sleep', { rho: 0.05 }, 'rejected'),
    ]),
  );
  expect(out.answer).toMatch(/preliminary signal/i);
  expect(out.answer).not.toContain('REM');
  expect(out.factSheet.map((e) => e.claim)).toEqual(['ds-001.rho', 'ds-001.ci_low', 'ds-001.ci_high']);
  expect(out.factSheet.every((e) => e.verdict === 'conditional')).toBe(true);
});

test('when data science failed, the prompt carries the warning and the answer states no numbers', async () => {
  const turnId = await h.newTurn();
  const out = await h.run(createSynthesise(h.deps), input(turnId, [], true));
  expect(out.answer).not.toMatch(/\d/);
  const request = h.scripted.requests
    .entries()
    .find((r) => r.step === 'synthesis' && JSON.stringify(r.messages).includes('FAILED'));
  expect(request).toBeDefined();
});

test('a retried synthesis does not repeat its deterministic events', async () => {
  const turnId = await h.newTurn();
  const synthesise = createSynthesise(h.deps);
  const args = input(turnId, [finding('ds-001', 'Average steps', { mean: 8123.4 }, 'validated')]);
  await h.run(synthesise, args);
  await h.run(synthesise, args);
  const events = await h.deps.events.readAfter(turnId, 0);
  for (const type of ['agent.started', 'agent.completed', 'fact_check']) {
    expect(events.filter((e) => e.type === type)).toHaveLength(1);
  }
});

test("the coach's draft leads after the findings, and its personal anchors are in the Fact Sheet it may cite", async () => {
  const turnId = await h.newTurn();
  const coachDraft = 'Your deep sleep has averaged 71.4 min over the last 14 days. What time do you usually go to bed?';
  const out = await h.run(createSynthesise(h.deps), {
    ...input(turnId, [finding('ds-001', 'More active minutes, more deep sleep', { rho: 0.52 }, 'validated')]),
    userMessage: 'Help me plan better deep sleep based on my data',
    mainAgent: 'health_coach',
    mainAgentDraft: coachDraft,
    anchors: [{ key: 'deep_sleep_minutes_mean_14d', value: 71.4, unit: 'min', n: 14, window: 'last 14 days' }],
  });
  expect(out.factSheet).toContainEqual({
    claim: 'anchor.deep_sleep_minutes_mean_14d',
    value: 71.4,
    unit: 'min',
    source: 'personal_anchor',
    n: 14,
    window: 'last 14 days',
  });
  expect(out.answer.startsWith('More active minutes, more deep sleep (rho 0.52).')).toBe(true);
  expect(out.answer.endsWith('What time do you usually go to bed?')).toBe(true);
  expect(out.factCheckIssues).toEqual([]);
});
