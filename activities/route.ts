import type { Message } from '../contracts/turn';
import { lastUserMessage, renderHistory } from './conversation';
import { ORCHESTRATOR_SYSTEM, routingUserPrompt } from './prompts/routing';
import { rawRoutingSchema, sanitiseRouting, type Routing } from './routing';
import { parseModelJson } from './services/llm';
import type { StepDeps } from './step-deps';
import { runStepAttempt } from './step-attempt';

export interface RouteInput {
  turnId: string;
  messages: Message[];
}

/** Step 1b. Malformed JSON throws ModelOutputInvalidError, which Temporal retries up to the cap. */
export function createRoute({ llm, events, models }: StepDeps) {
  return async function route(input: RouteInput): Promise<Routing> {
    const step = 'route';
    const response = await runStepAttempt(events, input.turnId, step, ({ attempt, signal }) =>
      llm.complete(
        { turnId: input.turnId, step, attempt, signal },
        {
          model: models.fast,
          system: ORCHESTRATOR_SYSTEM,
          maxTokens: 300,
          messages: [
            {
              role: 'user',
              content: routingUserPrompt(renderHistory(input.messages), lastUserMessage(input.messages)),
            },
          ],
        },
      ),
    );
    return sanitiseRouting(parseModelJson(response.text, rawRoutingSchema));
  };
}
