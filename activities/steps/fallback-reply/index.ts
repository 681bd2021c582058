import type { FactCheckOutcome, Message } from '../../../contracts/turn';
import { lastUserMessage } from '../../../contracts/last-user-message';
import type { FactCheckReferences } from '../../../checks/fact-check';
import { endCheckedAnswer, factCheckOutcome, writeCheckedAnswer } from '../check-answer';
import { FALLBACK_SYSTEM, fallbackMessages } from './prompt';
import { withMemory } from '../../runtime/memory-injection';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt } from '../../runtime/step-attempt';
import { announceAgentStarted } from '../../runtime/stream-agent-reply';

export interface FallbackReplyInput {
  turnId: string;
  messages: Message[];
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface FallbackReplyOutput {
  /** The reply as checked: no number in it fails the fact-check. */
  answer: string;
  factCheck: FactCheckOutcome;
}

/**
 * Routing named no agent: one cheap streamed reply, no pipeline, no validator. Its numbers go through
 * the same binding fact-check as synthesis's (step 7b), sentence by sentence as it streams, against an empty
 * Fact Sheet: only the user's own numbers may be echoed, and a sentence with any other is left out before
 * anyone sees it (no second writing: the reply is small talk, and a reply that needs a number it cannot have
 * is better without it).
 */
export function createReplyConversationally(deps: StepDeps) {
  return async function replyConversationally(input: FallbackReplyInput): Promise<FallbackReplyOutput> {
    const step = 'fallback_reply';
    const agent = 'synthesis';
    const { turnId } = input;
    const question = lastUserMessage(input.messages);
    const references: FactCheckReferences = { sheet: {}, userMessage: question };
    return runStepAttempt(deps.events, turnId, step, async (attempt) => {
      const startedAt = deps.clock();
      await announceAgentStarted(deps.events, { turnId, agent, invocation: step, question, at: startedAt });
      const { release, response } = await writeCheckedAnswer(deps, attempt, {
        turnId,
        agent,
        modelCall: step,
        inputs: { messages: input.messages },
        references,
        segment: attempt.narration.nextSegment(),
        onUntraced: 'drop',
        request: {
          model: deps.models.fast,
          system: withMemory(FALLBACK_SYSTEM, input.memory),
          maxTokens: 300,
          messages: fallbackMessages({ messages: input.messages }),
        },
      });
      const factCheck = factCheckOutcome(release, { resynthesised: false, removed: release.removed });
      const answer = release.released;
      await endCheckedAnswer(deps.events, turnId, {
        agent,
        step,
        answer,
        factCheck,
        completion: { startedAt, at: () => deps.clock(), costUsd: response.costUsd },
      });
      return { answer, factCheck };
    });
  };
}
