/**
 * The binding fact-check on the two answers synthesis does not write: the fallback reply (against an
 * empty Fact Sheet, so only the user's own numbers may be echoed) and the Investigator's briefing
 * (`checkAnswer`). Neither is written again: each goes out a sentence at a time as the check traces it, a
 * sentence with a number that traces to nothing is left out before anyone sees it, and the outcome is on
 * the log. What streamed is the answer: nothing is published again.
 */
import { createReplyConversationally } from '../../activities/steps/fallback-reply';
import { checkNumbers } from '../../checks/fact-check';
import { createCheckAnswer } from '../../activities/steps/check-answer';
import type { TurnEvent } from '../../contracts/event-data';
import type { StreamAgent } from '../../contracts/event-data';
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
    expect(events.filter((e) => e.type === 'step.retry')).toEqual([]);
    expect(streamedText(events, 'synthesis')).not.toContain('7.5');
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

  test('records the outcome the briefing was written with (writeBriefing), and publishes nothing else', async () => {
    const turnId = await h.newTurn();
    const briefing = 'Over the last 30 days you slept 412.3 min a night, up from 398.1 min.';
    await streamedBriefing(turnId, briefing);
    const factCheck = {
      numbers_checked: 4,
      issues: [{ value: 45, severity: 'warn' as const }],
      repairs: {
        resynthesised: false,
        removed: [
          { value: 45, sentence: 'That is 45 minutes more than most adults.', action: 'dropped_sentence' as const },
        ],
      },
    };
    const out = await createCheckAnswer(h.deps)({
      turnId,
      answer: briefing,
      userMessage: question,
      findings,
      factCheck,
    });
    expect(out.answer).toBe(briefing);
    expect(out.factCheck).toEqual(factCheck);
    // The fact sheet has the window's length, so "the last 30 days" traces.
    expect(out.factSheet.map((e) => e.claim)).toContain('inv-h1.window_days');
    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.map((e) => e.type)).toEqual(['agent.thought', 'fact_check']);
    expect(events[1].data).toEqual(factCheck);
  });

  test('a briefing written before sentence-by-sentence checking (no outcome passed) is checked whole; what streamed stays', async () => {
    const turnId = await h.newTurn();
    const briefing =
      'Over the last 30 days you slept 412.3 min a night, up from 398.1 min. That is 45 minutes more than most adults.' +
      '\n\nValidated: inv-h1.';
    await streamedBriefing(turnId, briefing);
    const out = await createCheckAnswer(h.deps)({ turnId, answer: briefing, userMessage: question, findings });
    expect(out.answer).toBe(
      'Over the last 30 days you slept 412.3 min a night, up from 398.1 min.\n\nValidated: inv-h1.',
    );
    expect(out.factCheck).toEqual({
      numbers_checked: 4,
      issues: [{ value: 45, severity: 'warn' }],
      repairs: {
        resynthesised: false,
        removed: [{ value: 45, sentence: 'That is 45 minutes more than most adults.', action: 'dropped_sentence' }],
      },
    });
    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.map((e) => e.type)).toEqual(['agent.thought', 'fact_check']);
  });
});
