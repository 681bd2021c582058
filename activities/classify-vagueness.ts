import type { Message } from '../contracts/turn';
import { lastUserMessage, renderHistory } from './conversation';
import { VAGUENESS_SYSTEM, vaguenessUserPrompt } from './prompts/vagueness';
import type { StepDeps } from './step-deps';
import { runStepAttempt } from './step-attempt';

export type Vagueness = 'low' | 'medium' | 'high';

export interface ClassifyVaguenessInput {
  turnId: string;
  messages: Message[];
}

/** Step 0. Biased toward `low`: any answer that is not exactly one of the three words means `low`. */
export function parseVagueness(text: string): Vagueness {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z]/g, '');
  return word === 'high' || word === 'medium' ? word : 'low';
}

export function createClassifyVagueness({ llm, events, models }: StepDeps) {
  return async function classifyVagueness(input: ClassifyVaguenessInput): Promise<{ vagueness: Vagueness }> {
    const step = 'classify_vagueness';
    const response = await runStepAttempt(events, input.turnId, step, ({ attempt, signal }) =>
      llm.complete(
        { turnId: input.turnId, step, attempt, signal },
        {
          model: models.fast,
          system: VAGUENESS_SYSTEM,
          maxTokens: 5,
          messages: [
            {
              role: 'user',
              content: vaguenessUserPrompt(renderHistory(input.messages), lastUserMessage(input.messages)),
            },
          ],
        },
      ),
    );
    return { vagueness: parseVagueness(response.text) };
  };
}
