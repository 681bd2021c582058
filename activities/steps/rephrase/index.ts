import { z } from 'zod';
import type { Message } from '../../../contracts/turn';
import { completeStep } from '../../runtime/complete-step';
import { lastUserMessage } from '../../../contracts/last-user-message';
import { QUESTION_REPHRASE_SYSTEM, rephraseUserPrompt } from './prompt';
import type { RoutableAgent } from '../../../contracts/steps';
import { canonicalAgent, type Routing } from '../route/sanitise-routing';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import { parseModelJson } from '../../../platform/llm';
import type { StepDeps } from '../../runtime/step-deps';

export interface RephraseInput {
  turnId: string;
  messages: Message[];
  routing: Routing;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

/** The question each agent of the turn will be asked. */
export type AgentQuestions = Partial<Record<RoutableAgent, string>>;

const rephraseSchema = z.object({
  main_agent_question: z.string().min(1),
  supporting_agent_questions: z.record(z.string(), z.string().min(1)).default({}),
});

/**
 * Step 2 (docs/design.md#step-2-rephrase). A reply that does not parse falls back
 * to the user's own message for every agent: rephrasing sharpens questions, it never blocks a turn.
 */
export function createRephraseQuestions(deps: StepDeps) {
  return async function rephraseQuestions(input: RephraseInput): Promise<AgentQuestions> {
    const { routing } = input;
    if (routing.main_agent === '') throw new Error('rephrase needs a routed main agent');
    const userMessage = lastUserMessage(input.messages);
    const agents: RoutableAgent[] = [routing.main_agent, ...routing.supporting_agents];
    const fallback = Object.fromEntries(agents.map((a) => [a, userMessage])) as AgentQuestions;
    const inputs = { messages: input.messages, agents };
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'rephrase',
      inputs,
      model: deps.models.fast,
      system: QUESTION_REPHRASE_SYSTEM,
      memory: input.memory,
      prompt: rephraseUserPrompt(inputs),
      maxTokens: 500,
    });
    try {
      const parsed = parseModelJson(response.text, rephraseSchema, response.requestId);
      const questions: AgentQuestions = { [routing.main_agent]: parsed.main_agent_question };
      // The model keys its questions by the labels the prompt listed (or an alias of one).
      const byAgent = new Map<RoutableAgent | null, string>(
        Object.entries(parsed.supporting_agent_questions).map(([name, question]) => [canonicalAgent(name), question]),
      );
      for (const agent of routing.supporting_agents) questions[agent] = byAgent.get(agent) ?? userMessage;
      return questions;
    } catch (err) {
      if (err instanceof ModelOutputInvalidError) return fallback;
      throw err;
    }
  };
}
