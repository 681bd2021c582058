import type { SingleCallStep } from '../../contracts/steps';
import type { LlmResponse } from '../../platform/llm';
import { withMemory } from './memory-injection';
import type { ModelCallInputs } from './model-call-inputs';
import type { StepDeps } from './step-deps';
import { runStepAttempt } from './step-attempt';

/**
 * One attempt of a single-shot model step (a classifier or a JSON planner): system + one user prompt,
 * one kind of model call, so the call's id is the step's. `inputs` is what the prompt was rendered from.
 * `memory` is the turn's memory summary, placed at the top of the system prompt (docs/design.md#injection);
 * it is required so that no step can leave it out by omission: `undefined` only where the step is shown
 * memory some other way (the extractor, in its user prompt).
 */
export function completeStep<Step extends SingleCallStep>(
  { llm, events }: Pick<StepDeps, 'llm' | 'events'>,
  call: {
    turnId: string;
    step: Step;
    inputs: ModelCallInputs[Step];
    model: string;
    system: string;
    memory: string | undefined;
    prompt: string;
    maxTokens: number;
  },
): Promise<LlmResponse> {
  return runStepAttempt(events, call.turnId, call.step, ({ attempt, signal }) =>
    llm.complete(
      { turnId: call.turnId, step: call.step, inputs: call.inputs, attempt, signal },
      {
        model: call.model,
        system: withMemory(call.system, call.memory),
        maxTokens: call.maxTokens,
        messages: [{ role: 'user', content: call.prompt }],
      },
    ),
  );
}
