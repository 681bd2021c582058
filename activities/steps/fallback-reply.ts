import type { Message } from '../../contracts/turn';
import { lastUserMessage } from '../runtime/conversation';
import { FALLBACK_SYSTEM, fallbackMessages } from './prompts/fallback';
import type { StepDeps } from '../runtime/step-deps';
import { runStepAttempt } from '../runtime/step-attempt';
import { streamAgentReply } from '../runtime/stream-agent-reply';

export interface FallbackReplyInput {
  turnId: string;
  messages: Message[];
}

/** Routing named no agent: one cheap streamed reply, no pipeline, no validator. */
export function createReplyConversationally(deps: StepDeps) {
  return async function replyConversationally(input: FallbackReplyInput): Promise<{ answer: string }> {
    const step = 'fallback_reply';
    const answer = await runStepAttempt(deps.events, input.turnId, step, ({ attempt, signal }) =>
      streamAgentReply(deps, {
        turnId: input.turnId,
        step,
        inputs: { messages: input.messages },
        attempt,
        signal,
        agent: 'synthesis',
        question: lastUserMessage(input.messages),
        request: {
          model: deps.models.fast,
          system: FALLBACK_SYSTEM,
          maxTokens: 300,
          messages: fallbackMessages({ messages: input.messages }),
        },
      }),
    );
    return { answer };
  };
}
