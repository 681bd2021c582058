import type Anthropic from '@anthropic-ai/sdk';
import type { ModelCallId } from '../contracts/steps';

/** A Messages API request as a rule sees it: validated, with the step it is for. */
export interface ScriptedRequest {
  /** From the `x-amy-step` header: which model call of the pipeline this is (contracts/steps.ts). */
  step: ModelCallId;
  model: string;
  /** The system prompt flattened to one string ('' when absent). */
  system: string;
  messages: Anthropic.MessageParam[];
  tools: Anthropic.Tool[];
  /** Text of the last user message (its text blocks joined; '' when it holds only tool results). */
  lastUserText: string;
}

export interface ScriptedToolUse {
  name: string;
  input: Record<string, unknown>;
}

export type ScriptedResponse = { text: string } | { toolUse: ScriptedToolUse[]; text?: string };

/** Answers every request for one model call of the pipeline. Must be deterministic in the request. */
export interface ScriptedRule<Call extends ModelCallId = ModelCallId> {
  step: Call;
  respond(req: ScriptedRequest): ScriptedResponse;
}
