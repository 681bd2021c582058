import type Anthropic from '@anthropic-ai/sdk';
import type { ModelCallId } from '../../contracts/steps';
import type { ModelCallInputs } from '../../activities/runtime/model-call-inputs';

/**
 * A Messages API request as a rule sees it: which model call it is and the typed inputs its prompt was
 * rendered from. Not the prompt: a rule answers from structured inputs, never from prompt wording.
 */
export interface ScriptedRequest<Call extends ModelCallId = ModelCallId> {
  /** From the `x-amy-step` header: which model call of the pipeline this is (contracts/steps.ts). */
  step: Call;
  /** From the body's `amy_step_inputs`, checked against the call's schema (step-inputs.ts). */
  inputs: ModelCallInputs[Call];
  model: string;
  /** The conversation as the API carries it: a tool user's tool calls and results are read from here. */
  messages: Anthropic.MessageParam[];
  tools: Anthropic.Tool[];
}

export interface ScriptedToolUse {
  name: string;
  input: Record<string, unknown>;
}

export type ScriptedResponse = { text: string } | { toolUse: ScriptedToolUse[]; text?: string };

/** Answers every request for one model call of the pipeline. Must be deterministic in the request. */
export interface ScriptedRule<Call extends ModelCallId = ModelCallId> {
  step: Call;
  respond(req: ScriptedRequest<Call>): ScriptedResponse;
}
