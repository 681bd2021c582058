import type { Message } from '../../../contracts/turn';
import { completeStep } from '../../runtime/complete-step';
import { VAGUENESS_SYSTEM, vaguenessUserPrompt } from './prompt';
import type { StepDeps } from '../../runtime/step-deps';

export type Vagueness = 'low' | 'medium' | 'high';

export interface ClassifyVaguenessInput {
  turnId: string;
  messages: Message[];
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

/** Step 0. Biased toward `low`: any answer that is not exactly one of the three words means `low`. */
function parseVagueness(text: string): Vagueness {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z]/g, '');
  return word === 'high' || word === 'medium' ? word : 'low';
}

export function createClassifyVagueness(deps: StepDeps) {
  return async function classifyVagueness(input: ClassifyVaguenessInput): Promise<{ vagueness: Vagueness }> {
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'classify_vagueness',
      inputs: { messages: input.messages },
      model: deps.models.fast,
      system: VAGUENESS_SYSTEM,
      memory: input.memory,
      prompt: vaguenessUserPrompt({ messages: input.messages }),
      maxTokens: 5,
    });
    return { vagueness: parseVagueness(response.text) };
  };
}
