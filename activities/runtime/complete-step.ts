import type { SingleCallStep } from '../../contracts/steps';
import type { LlmResponse } from '../../platform/llm';
import type { ModelCallInputs } from './model-call-inputs';
import type { StepDeps } from './step-deps';
import { runStepAttempt } from './step-attempt';

/**
 * One attempt of a single-shot model step (a classifier or a JSON planner): system + one user prompt,
 * one kind of model call, so the call's id is the step's. `inputs` is what the prompt was rendered from.
 */
export function completeStep<Step extends SingleCallStep>(
  { llm, events }: Pick<StepDeps, 'llm' | 'events'>,
  call: {
    turnId: string;
    step: Step;
    inputs: ModelCallInputs[Step];
    model: string;
    system: string;
    prompt: string;
    maxTokens: number;
  },
): Promise<LlmResponse> {
  return runStepAttempt(events, call.turnId, call.step, ({ attempt, signal }) =>
    llm.complete(
      { turnId: call.turnId, step: call.step, inputs: call.inputs, attempt, signal },
      {
        model: call.model,
        system: call.system,
        maxTokens: call.maxTokens,
        messages: [{ role: 'user', content: call.prompt }],
      },
    ),
  );
}
