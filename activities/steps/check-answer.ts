/**
 * Step 7b as the steps that write an answer run it (synthesis, the fallback reply, the Investigator's briefing).
 * The answer goes out a sentence at a time as the check traces it (../../checks/sentence-release.ts), so what a
 * client was shown is the answer: nothing is replaced or taken back. These are the step's two ends of it:
 *
 * - `writeCheckedAnswer`: one writing of the answer, a model call streamed through the check into the step's
 *   narration, going on from what went out before it (an earlier attempt's part, or the first writing's before a
 *   repair);
 * - `endCheckedAnswer`: the `fact_check` event with the outcome, then, for a step that announced its agent's
 *   start, the agent's `agent.completed`.
 */
import type { StreamAgent } from '../../contracts/event-data';
import type { ModelCallId } from '../../contracts/steps';
import type { FactCheckOutcome, FactCheckRemoval, FactEntry } from '../../contracts/turn';
import type { EventLog } from '../../platform/event-log';
import { checkNumbers, removeUntraced, toIssue, type FactCheckReferences } from '../../checks/fact-check';
import { buildFactSheet, type FactSheetFinding } from '../../checks/fact-sheet';
import type { NumberToken } from '../../checks/numbers';
import { SentenceRelease, type OnUntraced } from '../../checks/sentence-release';
import type { ModelCallInputs } from '../runtime/model-call-inputs';
import type { NarrationSegment } from '../runtime/narration';
import type { StepDeps } from '../runtime/step-deps';
import type { StepAttempt } from '../runtime/step-attempt';
import { announceAgentCompleted, streamThoughts, type NarratedResponse } from '../runtime/stream-agent-reply';
import type { LlmRequest } from '../../platform/llm';

/** What the check read in an answer as first written, and what it did: the `fact_check` event's outcome. */
export function factCheckOutcome(
  first: { checked: NumberToken[]; untraced: NumberToken[] },
  repairs: { resynthesised: boolean; removed: FactCheckRemoval[] },
): FactCheckOutcome {
  return { numbers_checked: first.checked.length, issues: first.untraced.map(toIssue), repairs };
}

/**
 * Streams one writing of an answer into `segment` through the check: what goes out of it is checked, and the
 * model goes on from `continues` (what went out before this writing, given as the start of its reply) and from
 * what earlier attempts of the step showed of this segment. Returns the check's state, whose `released` is the
 * answer so far, and the model's response.
 */
export async function writeCheckedAnswer<Call extends ModelCallId>(
  deps: Pick<StepDeps, 'llm'>,
  attempt: StepAttempt,
  call: {
    turnId: string;
    agent: StreamAgent;
    modelCall: Call;
    inputs: ModelCallInputs[Call];
    request: LlmRequest;
    references: FactCheckReferences;
    segment: NarrationSegment;
    onUntraced: OnUntraced;
    continues?: string;
  },
): Promise<{ release: SentenceRelease; response: NarratedResponse }> {
  const continues = call.continues ?? '';
  const release = new SentenceRelease(call.references, {
    released: continues + call.segment.earlier,
    onUntraced: call.onUntraced,
  });
  // A writing the check stops is cut short there (the model call is stopped): the rest of it would not go out.
  const response = await streamThoughts(deps, {
    turnId: call.turnId,
    modelCall: call.modelCall,
    inputs: call.inputs,
    narration: attempt.narration,
    segment: call.segment,
    continues,
    signal: attempt.signal,
    agent: call.agent,
    request: call.request,
    filter: release,
  });
  return { release, response };
}

/** How a step's answer ends: `endCheckedAnswer`'s input. */
interface AnswerEnding {
  agent: StreamAgent;
  step: string;
  answer: string;
  factCheck: FactCheckOutcome;
  /**
   * For a step that announced its agent's start: the agent's `agent.completed`, announced last with
   * the answer as its output. `at` is read when the completion is written.
   */
  completion?: { startedAt: Date; at: () => Date; costUsd: number };
}

/** The end of step 7b for an answer: the `fact_check` event, then the agent's completion. */
export async function endCheckedAnswer(events: EventLog, turnId: string, ending: AnswerEnding): Promise<void> {
  await events.append(turnId, [{ type: 'fact_check', data: ending.factCheck, dedupeKey: 'fact_check' }]);
  if (ending.completion) {
    const { startedAt, at, costUsd } = ending.completion;
    await announceAgentCompleted(events, {
      turnId,
      agent: ending.agent,
      invocation: ending.step,
      startedAt,
      at: at(),
      costUsd,
      output: ending.answer,
    });
  }
}

export interface CheckAnswerInput {
  turnId: string;
  answer: string;
  userMessage: string;
  findings: FactSheetFinding[];
  /** What the check did as the briefing was written (writeBriefing's `factCheck`). */
  factCheck?: FactCheckOutcome;
}

export interface CheckAnswerOutput {
  /** The briefing as checked: no number in it fails the fact-check. */
  answer: string;
  factSheet: FactEntry[];
  factCheck: FactCheckOutcome;
}

/**
 * Step 7b's record for an answer that synthesis did not write (the Investigator's briefing), in an activity of its
 * own: the briefing was checked sentence by sentence as it was written (writeBriefing), against the Fact Sheet
 * built here by the same rules; this records the outcome (`fact_check`) and returns the Fact Sheet.
 *
 * A turn whose briefing was written before sentence-by-sentence checking passes no outcome: its briefing is
 * checked whole here, as it was then, and what it streamed stays as it is (nothing is taken back).
 */
export function createCheckAnswer(deps: StepDeps) {
  return async function checkAnswer(input: CheckAnswerInput): Promise<CheckAnswerOutput> {
    const { sheet, entries } = buildFactSheet(input.findings);
    let { answer, factCheck } = input;
    if (!factCheck) {
      const references = { sheet, userMessage: input.userMessage };
      const first = checkNumbers(answer, references);
      const checked = removeUntraced(answer, references);
      answer = checked.answer;
      factCheck = factCheckOutcome(first, { resynthesised: false, removed: checked.removed });
    }
    await endCheckedAnswer(deps.events, input.turnId, {
      agent: 'investigator',
      step: 'investigator_briefing',
      answer,
      factCheck,
    });
    return { answer, factSheet: entries, factCheck };
  };
}
