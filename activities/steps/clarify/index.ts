/**
 * Whether the question needs asking back (docs/api.md#asking-back): a turn whose request accepts clarification
 * questions asks the model first whether the question can be read in ways that give different answers (which
 * metric, which window, which comparison, which lab markers), and if so with which options. The model's reply is
 * taken leniently where it is merely untidy (a likely option that is not offered becomes the first option; ids are
 * made unique) and refused where it cannot be asked (fewer than two options), which reads as "not ambiguous": a
 * question the turn cannot put well is not put at all.
 */
import { z } from 'zod';
import type { Message } from '../../../contracts/turn';
import type { InputOption } from '../../../contracts/interaction';
import { parseModelJson } from '../../../platform/llm';
import { completeStep } from '../../runtime/complete-step';
import type { StepDeps } from '../../runtime/step-deps';
import { CLARIFY_SYSTEM, clarifyUserPrompt } from './prompt';

const AMBIGUITIES = ['metric', 'window', 'comparison', 'markers'] as const;
export type Ambiguity = (typeof AMBIGUITIES)[number];

/** At most this many readings are offered: a question with more is not one a person answers at a glance. */
const MAX_OPTIONS = 4;
const MAX_LABEL = 120;
const MAX_QUESTION = 300;

const rawClarificationSchema = z.union([
  z.object({ ambiguous: z.literal(false) }).passthrough(),
  z.object({
    ambiguous: z.literal(true),
    about: z.enum(AMBIGUITIES),
    question: z.string().trim().min(1),
    options: z.array(z.object({ id: z.string().trim().min(1), label: z.string().trim().min(1) })),
    likely_option_id: z.string().default(''),
    free_text: z.boolean().default(false),
  }),
]);

export type Clarification =
  | { ambiguous: false }
  | {
      ambiguous: true;
      about: Ambiguity;
      question: string;
      options: InputOption[];
      /** The most likely reading: what the turn goes on with if the question expires. */
      likelyOptionId: string;
      freeText: boolean;
    };

export interface ClarifyInput {
  turnId: string;
  messages: Message[];
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

const NOT_AMBIGUOUS: Clarification = { ambiguous: false };

const optionId = (id: string) =>
  id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 40) || 'option';

/** The model's reply as a question the turn can ask, or "not ambiguous" when it cannot be asked well. */
export function sanitiseClarification(raw: z.infer<typeof rawClarificationSchema>): Clarification {
  if (!raw.ambiguous) return NOT_AMBIGUOUS;
  const options: InputOption[] = [];
  for (const option of raw.options.slice(0, MAX_OPTIONS)) {
    let id = optionId(option.id);
    while (options.some((o) => o.id === id)) id = `${id}_${options.length + 1}`;
    options.push({ id, label: option.label.slice(0, MAX_LABEL) });
  }
  if (options.length < 2) return NOT_AMBIGUOUS;
  const likely = options.find((o) => o.id === optionId(raw.likely_option_id)) ?? options[0];
  return {
    ambiguous: true,
    about: raw.about,
    question: raw.question.slice(0, MAX_QUESTION),
    options,
    likelyOptionId: likely.id,
    freeText: raw.free_text,
  };
}

export function createClarify(deps: StepDeps) {
  return async function clarify(input: ClarifyInput): Promise<Clarification> {
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'clarify',
      inputs: { messages: input.messages },
      model: deps.models.fast,
      system: CLARIFY_SYSTEM,
      memory: input.memory,
      prompt: clarifyUserPrompt({ messages: input.messages }),
      maxTokens: 400,
    });
    return sanitiseClarification(parseModelJson(response.text, rawClarificationSchema, response.requestId));
  };
}
