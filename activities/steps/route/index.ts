import type { Message } from '../../../contracts/turn';
import { completeStep } from '../../runtime/complete-step';
import { ORCHESTRATOR_SYSTEM, routingUserPrompt } from './prompt';
import { rawRoutingSchema, sanitiseRouting, type Routing } from './sanitise-routing';
import { parseModelJson } from '../../../platform/llm';
import type { StepDeps } from '../../runtime/step-deps';

export interface RouteInput {
  turnId: string;
  messages: Message[];
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

/** Step 1b. Malformed JSON throws ModelOutputInvalidError, which Temporal retries up to the cap. */
export function createRoute(deps: StepDeps) {
  return async function route(input: RouteInput): Promise<Routing> {
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'route',
      inputs: { messages: input.messages },
      model: deps.models.fast,
      system: ORCHESTRATOR_SYSTEM,
      memory: input.memory,
      prompt: routingUserPrompt({ messages: input.messages }),
      maxTokens: 300,
    });
    return sanitiseRouting(parseModelJson(response.text, rawRoutingSchema, response.requestId));
  };
}
