/**
 * Step 5, reflection (docs/design.md#step-5-reflection): runs only when the turn had supporting
 * agents. `YES` asks at most one follow-up of the Data Science and the Domain Expert agents; an answer
 * that cannot be used is `NO`: reflection refines an answer, it never blocks one.
 */
import { log } from '@temporalio/activity';
import { z } from 'zod';
import { completeStep } from '../../runtime/complete-step';
import { REFLECTION_SYSTEM, reflectionUserPrompt } from './prompt';
import { parseModelJson } from '../../../platform/llm';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import { canonicalAgent } from '../route/sanitise-routing';
import type { StepDeps } from '../../runtime/step-deps';

export interface ReflectInput {
  turnId: string;
  userMessage: string;
  mainDraft: string;
  supportingInsights: string;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface Reflection {
  /** The follow-up question per agent; empty when the decision was NO. */
  dataScience: string | null;
  domainExpert: string | null;
}

const reflectionSchema = z.object({
  decision: z.string(),
  reflection_questions: z.record(z.string(), z.string()).default({}),
});

const NO_FOLLOW_UP: Reflection = { dataScience: null, domainExpert: null };

export function createReflect(deps: StepDeps) {
  return async function reflect(input: ReflectInput): Promise<Reflection> {
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'reflection',
      inputs: {
        userMessage: input.userMessage,
        mainDraft: input.mainDraft,
        supportingInsights: input.supportingInsights,
      },
      model: deps.models.fast,
      system: REFLECTION_SYSTEM,
      memory: input.memory,
      prompt: reflectionUserPrompt(input),
      maxTokens: 400,
    });
    let parsed: z.infer<typeof reflectionSchema>;
    try {
      parsed = parseModelJson(response.text, reflectionSchema, response.requestId);
    } catch (err) {
      if (!(err instanceof ModelOutputInvalidError)) throw err;
      log.warn('reflection answer unusable; no follow-up', { error: err.message });
      return NO_FOLLOW_UP;
    }
    if (parsed.decision.trim().toUpperCase() !== 'YES') return NO_FOLLOW_UP;
    const reflection: Reflection = { ...NO_FOLLOW_UP };
    for (const [name, question] of Object.entries(parsed.reflection_questions)) {
      const agent = canonicalAgent(name);
      if (!question.trim()) continue;
      // The first question per agent counts; the Health Coach is never a follow-up agent.
      if (agent === 'data_science') reflection.dataScience ??= question.trim();
      if (agent === 'domain_expert') reflection.domainExpert ??= question.trim();
    }
    return reflection;
  };
}
