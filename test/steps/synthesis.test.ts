/**
 * Synthesis (step 7) and the fact-check (7b) through the real LLM layer and the scripted model:
 * the answer is built from the fact sheet, conditional findings are hedged, rejected ones never
 * appear, a DS failure yields no numbers, and the fact_check event reports what the check found.
 * The check binds as the answer streams: with the scripted synthesis made to state a number that traces to
 * nothing (`untracedNumber`), the writing stops at that sentence and goes on from what went out, the model told
 * which number, and a sentence that still does not trace is left out; the stream never carries the number, its
 * deltas concatenated are the checked answer, and the Turn keeps the outcome.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { checkNumbers } from '../../checks/fact-check';
import { createSynthesise, type SynthesisInput, type SynthesisOutput } from '../../activities/steps/synthesis';
import type { SynthesisFinding } from '../../activities/steps/synthesis/prompt';
import { createTurnLifecycle } from '../../activities/bookkeeping/turn-lifecycle';
import type { TurnEvent } from '../../contracts/event-data';
import type { TurnResult } from '../../contracts/turn';
import { scriptedRules } from '../../dev/scripted-model/rules';
import type { TurnStreamEvent } from '../../sdk/src/events';
import { AgentTranscripts } from '../../sdk/src/streaming/transcripts';
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
  // "the last 90 days" and "60.39 bpm": both checked, both traced (the window's length is on the sheet).
  expect(out.factCheck).toEqual({ numbers_checked: 2, issues: [], repairs: { resynthesised: false, removed: [] } });
  expect(out.factSheet.map((e) => [e.claim, e.value])).toEqual([
    ['ds-001.mean', 60.3912],
    ['ds-001.n', 88],
    ['ds-001.window_days', 90],
  ]);
  const events = await h.deps.events.readAfter(turnId, 0);
  expect(events.map((e) => e.type)).toEqual(
    expect.arrayContaining(['agent.started', 'agent.thought', 'agent.completed', 'fact_check']),
  );
  expect(events.find((e) => e.type === 'fact_check')?.data).toEqual(out.factCheck);
  expect(events.filter((e) => e.type === 'step.retry')).toEqual([]);
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
  expect(out.factSheet.map((e) => e.claim)).toEqual([
    'ds-001.rho',
    'ds-001.ci_low',
    'ds-001.ci_high',
    'ds-001.window_days',
  ]);
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

test("the coach's draft leads after the findings; its personal anchors are apart from the Fact Sheet, and the answer may cite them", async () => {
  const turnId = await h.newTurn();
  const coachDraft = 'Your deep sleep has averaged 71.4 min over the last 14 days. What time do you usually go to bed?';
  const out = await h.run(createSynthesise(h.deps), {
    ...input(turnId, [finding('ds-001', 'More active minutes, more deep sleep', { rho: 0.52 }, 'validated')]),
    userMessage: 'Help me plan better deep sleep based on my data',
    mainAgent: 'health_coach',
    mainAgentDraft: coachDraft,
    anchors: [
      {
        key: 'deep_sleep_minutes_mean_14d',
        label: 'average nightly deep sleep',
        value: 71.4,
        unit: 'min',
        n: 14,
        window: 'last 14 days',
      },
    ],
  });
  // The Fact Sheet holds the validated finding only; the anchor is in a list of its own.
  expect(out.factSheet.map((e) => e.claim)).toEqual(['ds-001.rho', 'ds-001.window_days']);
  expect(out.personalAnchors).toEqual([
    {
      claim: 'anchor.deep_sleep_minutes_mean_14d',
      label: 'average nightly deep sleep',
      value: 71.4,
      unit: 'min',
      n: 14,
      window: 'last 14 days',
    },
  ]);
  // Synthesis is shown the anchors apart, and the check traces the coach's 71.4 and 14 days to them.
  const prompt = JSON.stringify(h.scripted.requests.entries().at(-1)!.messages);
  expect(prompt).toContain('PERSONAL ANCHORS');
  expect(out.answer.startsWith('More active minutes, more deep sleep (rho 0.52).')).toBe(true);
  expect(out.answer).toContain('71.4 min over the last 14 days');
  expect(out.answer.endsWith('What time do you usually go to bed?')).toBe(true);
  expect(out.factCheck).toMatchObject({ issues: [], repairs: { resynthesised: false, removed: [] } });
});

describe('the binding fact-check, with a synthesis that states a number in no reference', () => {
  const RHR = finding(
    'ds-001',
    'Your average resting heart rate over the last 90 days',
    { mean: 60.3912, n: 88 },
    'validated',
    'bpm',
  );
  /** The answer the scripted synthesis writes for RHR when it states nothing untraced. */
  const CLEAN_ANSWER = 'Your average resting heart rate over the last 90 days (mean 60.39 bpm).';
  const WRONG_SENTENCE = /^Compared with the month before, that is [\d.]+ bpm higher\.$/;

  let first: StepHarness;
  let always: StepHarness;
  beforeAll(async () => {
    [first, always] = await Promise.all([
      startStepHarness({ rules: scriptedRules({ untracedNumber: 'first' }) }),
      startStepHarness({ rules: scriptedRules({ untracedNumber: 'always' }) }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), always?.close()]);
  });

  /** The synthesis text as a client rebuilds it: every delta, concatenated (the SDK's transcripts do the same). */
  function streamedText(events: TurnEvent[]): string {
    const transcripts = new AgentTranscripts();
    for (const { id, type, data } of events) transcripts.record({ id, type, ...data } as TurnStreamEvent);
    const appended = events
      .filter((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis')
      .map((e) => String(e.data.delta))
      .join('');
    expect(transcripts.text('synthesis')).toBe(appended);
    return appended;
  }

  const synthesisCalls = (harness: StepHarness) =>
    harness.scripted.requests.entries().filter((r) => r.step === 'synthesis');

  test('first: the writing stops at the untraced sentence and goes on from what went out, told which number; the stream never shows it', async () => {
    const turnId = await first.newTurn();
    const out = await first.run(createSynthesise(first.deps), input(turnId, [RHR]));
    expect(out.answer).toBe(CLEAN_ANSWER);
    expect(out.factCheck.numbers_checked).toBe(3);
    expect(out.factCheck.issues).toHaveLength(1);
    expect(out.factCheck.repairs).toEqual({ resynthesised: true, removed: [] });
    const wrong = out.factCheck.issues[0].value;

    // The second call is the same conversation, then the first writing and the number that failed, by name, and
    // the answer so far as the start of the reply.
    const calls = synthesisCalls(first).slice(-2);
    expect(calls).toHaveLength(2);
    const repairPrompt = JSON.stringify(calls[1].messages);
    expect(repairPrompt).toContain(`${wrong} bpm`);
    expect(repairPrompt).toMatch(/not in the FACT SHEET/);
    expect(calls[1].messages.at(-1)).toEqual({ role: 'assistant', content: CLEAN_ANSWER });

    const events = await first.deps.events.readAfter(turnId, 0);
    // The repair is inside the step: nothing is announced to discard, and nothing needs to be.
    expect(events.filter((e) => e.type === 'step.retry')).toEqual([]);
    expect(streamedText(events)).toBe(out.answer);
    expect(streamedText(events)).not.toContain(String(wrong));
    expect(events.find((e) => e.type === 'fact_check')?.data).toEqual(out.factCheck);
    // One agent bracket around both writings, closed after the repair, with both calls' cost.
    expect(events.filter((e) => e.type === 'agent.completed')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('agent.completed');

    // Both calls are on the ledger, under the activity's attempt. The first writing ended with its untraced
    // sentence, so the model had finished it when the check stopped it (a writing stopped earlier is 'aborted',
    // billed for what it generated: test/unit/stream-thoughts.test.ts).
    const ledger = await first.deps.pool.query<{ attempt: number; outcome: string }>(
      `SELECT attempt, outcome FROM llm_calls WHERE turn_id = $1 AND step = 'synthesis' ORDER BY created_at`,
      [turnId],
    );
    expect(ledger.rows).toEqual([
      { attempt: 1, outcome: 'success' },
      { attempt: 1, outcome: 'success' },
    ]);
  });

  test('first, retried by Temporal after its repair streamed: the retry adds nothing to what was shown, and ends with the same answer', async () => {
    const turnId = await first.newTurn();
    const synthesise = createSynthesise(first.deps);
    await first.run(synthesise, input(turnId, [RHR]));
    const shownBefore = streamedText(await first.deps.events.readAfter(turnId, 0));
    // As if the activity failed after its repair and Temporal ran it again, as attempt 2.
    const out: SynthesisOutput = await new MockActivityEnvironment({ attempt: 2 }).run(
      synthesise,
      input(turnId, [RHR]),
    );
    const events = await first.deps.events.readAfter(turnId, 0);
    expect(events.filter((e) => e.type === 'step.retry').map((e) => e.data.attempt)).toEqual([2]);
    expect(streamedText(events)).toBe(shownBefore);
    expect(out.answer).toBe(CLEAN_ANSWER);
    expect(streamedText(events)).toBe(out.answer);
  });

  test('always: the repair still states it, so that sentence is left out; the answer states no untraced number, and the Turn keeps the outcome', async () => {
    const turnId = await always.newTurn();
    const out = await always.run(createSynthesise(always.deps), input(turnId, [RHR]));
    // Exactly the offending sentence is gone: what is left is the answer without it.
    expect(out.answer).toBe(CLEAN_ANSWER);
    const sheet = Object.fromEntries(out.factSheet.map((e) => [e.claim, e.value]));
    expect(checkNumbers(out.answer, { sheet, userMessage: input(turnId, []).userMessage }).untraced).toEqual([]);
    expect(out.factCheck.repairs.resynthesised).toBe(true);
    expect(out.factCheck.repairs.removed).toEqual([
      { value: expect.any(Number), sentence: expect.stringMatching(WRONG_SENTENCE), action: 'dropped_sentence' },
    ]);
    expect(out.factCheck.issues.map((i) => i.value)).toEqual(out.factCheck.repairs.removed.map((r) => r.value));

    const events = await always.deps.events.readAfter(turnId, 0);
    expect(events.filter((e) => e.type === 'step.retry')).toEqual([]);
    expect(streamedText(events)).toBe(out.answer);
    expect(events.find((e) => e.type === 'fact_check')?.data).toEqual(out.factCheck);

    // The Turn keeps the outcome as `result.fact_check`, and turn.completed carries it.
    const result = await createTurnLifecycle(always.deps).completeTurn({
      turnId,
      answer: out.answer,
      factSheet: out.factSheet,
      agentsUsed: ['data_science'],
      validator: { findings_total: 1, findings_validated: 1, findings_conditional: 0, findings_rejected: 0 },
      factCheck: out.factCheck,
    });
    expect(result.fact_check).toEqual(out.factCheck);
    const row = await always.deps.pool.query<{ result: TurnResult }>('SELECT result FROM turns WHERE id = $1', [
      turnId,
    ]);
    expect(row.rows[0].result.fact_check).toEqual(out.factCheck);
    expect(row.rows[0].result.answer).toBe(out.answer);
  });

  test('always, when Data Science failed: the wrong sentence goes, and the answer states no number at all', async () => {
    const turnId = await always.newTurn();
    const out = await always.run(createSynthesise(always.deps), input(turnId, [], true));
    expect(out.answer).not.toMatch(/\d/);
    expect(out.answer).toMatch(/^I couldn't complete the analysis/);
    expect(out.factCheck.repairs.removed.map((r) => r.action)).toEqual(['dropped_sentence']);
  });
});
