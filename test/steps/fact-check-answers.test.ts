/**
 * The binding fact-check on the two answers synthesis does not write: the fallback reply (against an
 * empty Fact Sheet, so only the user's own numbers may be echoed) and the Investigator's briefing
 * (`checkAnswer`). Neither is written again: a number that traces to nothing is removed with its
 * sentence, the checked answer replaces the streamed one for a client, and the outcome is on the log.
 */
import { createReplyConversationally } from '../../activities/steps/fallback-reply';
import { checkNumbers } from '../../checks/fact-check';
import { createCheckAnswer } from '../../activities/steps/check-answer';
import type { TurnEvent } from '../../contracts/events';
import type { StreamAgent } from '../../contracts/events';
import { defaultRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import type { TurnStreamEvent } from '../../sdk/src/events';
import { AgentTranscripts } from '../../sdk/src/streaming/transcripts';
import { startStepHarness, type StepHarness } from '../support/step-harness';

/** A fallback reply that makes a number up, beside one the user gave. */
const inventingFallback: ScriptedRule<'fallback_reply'> = {
  step: 'fallback_reply',
  respond: () => ({
    text: "Glad the 10,000 steps went well! Most people sleep 7.5 hours a night. I'm here whenever you want to look at your data.",
  }),
};

let h: StepHarness;
beforeAll(async () => {
  h = await startStepHarness({
    rules: [...defaultRules.filter((rule) => rule.step !== 'fallback_reply'), inventingFallback],
  });
});
afterAll(async () => {
  await h?.close();
});

function streamedText(events: TurnEvent[], agent: StreamAgent): string {
  const transcripts = new AgentTranscripts();
  for (const { id, type, data } of events) transcripts.record({ id, type, ...data } as TurnStreamEvent);
  return transcripts.text(agent);
}

describe('the fallback reply', () => {
  const question = 'I walked 10,000 steps today, thanks for the push!';

  test('an invented number goes with its sentence; the user’s own number stays', async () => {
    const turnId = await h.newTurn();
    const out = await h.run(createReplyConversationally(h.deps), {
      turnId,
      messages: [{ role: 'user', content: question }],
    });
    expect(out.answer).toBe("Glad the 10,000 steps went well! I'm here whenever you want to look at your data.");
    expect(checkNumbers(out.answer, { sheet: {}, userMessage: question }).untraced).toEqual([]);
    expect(out.factCheck).toEqual({
      numbers_checked: 2,
      issues: [{ value: 7.5, severity: 'warn' }],
      repairs: {
        resynthesised: false,
        removed: [{ value: 7.5, sentence: 'Most people sleep 7.5 hours a night.', action: 'dropped_sentence' }],
      },
    });

    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.find((e) => e.type === 'fact_check')?.data).toEqual(out.factCheck);
    expect(events.filter((e) => e.type === 'step.retry').map((e) => e.data)).toEqual([
      expect.objectContaining({
        step: 'fallback_reply',
        attempt: 2,
        reason: expect.stringMatching(/^fact-check: 7\.5/),
      }),
    ]);
    expect(streamedText(events, 'synthesis')).toBe(out.answer);
    expect(events.at(-1)).toMatchObject({ type: 'agent.completed', data: { agent: 'synthesis' } });
  });
});

describe("the Investigator's briefing (checkAnswer)", () => {
  const findings = [
    {
      finding: {
        id: 'inv-h1',
        numbers: { recent_mean: 412.3, prior_mean: 398.1, n: 60 },
        n: 60,
        window: 'the last 30 days vs the 30 days before',
        unit: 'min',
      },
      verdict: 'validated' as const,
      source: 'investigator',
    },
  ];
  const question = 'Is there anything in my numbers worth knowing?';

  /** The briefing as the briefing step streamed it, attempt 1. */
  async function streamedBriefing(turnId: string, text: string) {
    await h.deps.events.append(turnId, [
      {
        type: 'agent.thought',
        data: { agent: 'investigator', delta: text, attempt: 1, step: 'investigator_briefing' },
      },
    ]);
  }

  test('a briefing whose numbers trace is kept as written, and nothing is published again', async () => {
    const turnId = await h.newTurn();
    const briefing = 'Over the last 30 days you slept 412.3 min a night, up from 398.1 min.';
    await streamedBriefing(turnId, briefing);
    const out = await createCheckAnswer(h.deps)({ turnId, answer: briefing, userMessage: question, findings });
    expect(out.answer).toBe(briefing);
    expect(out.factCheck).toEqual({ numbers_checked: 3, issues: [], repairs: { resynthesised: false, removed: [] } });
    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.map((e) => e.type)).toEqual(['agent.thought', 'fact_check']);
  });

  test('an untraced number is removed with its sentence, the checked briefing replaces the streamed one, once', async () => {
    const turnId = await h.newTurn();
    const briefing =
      'Over the last 30 days you slept 412.3 min a night, up from 398.1 min. That is 45 minutes more than most adults.' +
      '\n\nValidated: inv-h1.';
    await streamedBriefing(turnId, briefing);
    const checkAnswer = createCheckAnswer(h.deps);
    const input = { turnId, answer: briefing, userMessage: question, findings };
    const out = await checkAnswer(input);
    expect(out.answer).toBe(
      'Over the last 30 days you slept 412.3 min a night, up from 398.1 min.\n\nValidated: inv-h1.',
    );
    expect(out.factCheck.repairs.removed).toEqual([
      { value: 45, sentence: 'That is 45 minutes more than most adults.', action: 'dropped_sentence' },
    ]);
    // The fact sheet has the window's length, so "the last 30 days" traces.
    expect(out.factSheet.map((e) => e.claim)).toContain('inv-h1.window_days');

    // A retry of the activity publishes nothing more.
    await checkAnswer(input);
    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.map((e) => e.type)).toEqual(['agent.thought', 'step.retry', 'agent.thought', 'fact_check']);
    expect(events[1].data).toMatchObject({ step: 'investigator_briefing', attempt: 2 });
    expect(events[2].data).toMatchObject({ agent: 'investigator', step: 'investigator_briefing', attempt: 2 });
    expect(streamedText(events, 'investigator')).toBe(out.answer);
  });
});
