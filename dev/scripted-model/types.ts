import type Anthropic from '@anthropic-ai/sdk';
import type { ModelCallId } from '../../contracts/steps';
import type { ModelCallInputs } from '../../activities/runtime/model-call-inputs';
import type { ScriptedWeb, ScriptedWebPage, WebFetchOutcome, WebSearchOutcome } from './web-tools';

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
  /** The server tools the request offers, run as the API runs them (./web-tools.ts): NO_WEB when it offers none. */
  web: ScriptedWeb;
}

export interface ScriptedToolUse {
  name: string;
  input: Record<string, unknown>;
}

/** A server tool the reply used, with what it gave: laid out as the API's blocks before the reply's text. */
export type ScriptedServerToolUse =
  | { name: 'web_search'; input: { query: string }; outcome: WebSearchOutcome }
  | { name: 'web_fetch'; input: { url: string }; outcome: WebFetchOutcome };

/** What the reply says on a page it found, as a text block of its own citing the page (after its other text). */
export interface ScriptedCitedText {
  text: string;
  page: ScriptedWebPage;
}

export type ScriptedResponse = ({ text: string } | { toolUse: ScriptedToolUse[]; text?: string }) & {
  serverToolUse?: ScriptedServerToolUse[];
  cited?: ScriptedCitedText;
};

/** Answers every request for one model call of the pipeline. Must be deterministic in the request. */
export interface ScriptedRule<Call extends ModelCallId = ModelCallId> {
  step: Call;
  respond(req: ScriptedRequest<Call>): ScriptedResponse;
}
