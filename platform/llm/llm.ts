/**
 * What the LLM layer offers its callers: a model call, whole or streamed, made in a turn's name (./index.ts
 * makes the client, ./tracing.ts puts each call in its span).
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { BetaWebFetchTool20250910 } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ModelCallId } from '../../contracts/steps';

export interface LlmCallContext {
  turnId: string;
  /** Which model call this is: its step's id, or `<step>.<call>` for a step with several kinds of call. */
  step: ModelCallId;
  /**
   * What the call's prompt was rendered from (its type is next to the prompt builder; the map of them is
   * activities/runtime/model-call-inputs.ts). Sent only to the scripted model, which answers from it.
   */
  inputs: object;
  attempt: number;
  /** Aborts the HTTP request, e.g. the activity's cancellation signal. */
  signal?: AbortSignal;
}

/**
 * A tool a request offers: one the caller runs (`Tool`), or one the Messages API runs itself (web search, and web
 * fetch, which is still in beta: a request offering it carries the beta header, ./index.ts's WEB_FETCH_BETA).
 */
export type LlmTool = Anthropic.ToolUnion | BetaWebFetchTool20250910;

export interface LlmRequest {
  /** An alias (`opus`, `sonnet`, `haiku`) or an exact model id (./models.ts). */
  model: string;
  system?: string;
  messages: Anthropic.MessageParam[];
  maxTokens: number;
  tools?: LlmTool[];
  temperature?: number;
}

export interface LlmResponse {
  text: string;
  message: Anthropic.Message;
  costUsd: number;
  requestId: string | null;
}

export interface Llm {
  complete(ctx: LlmCallContext, req: LlmRequest): Promise<LlmResponse>;
  /**
   * Streams text deltas; each chunk goes to onDelta as it arrives. The stream's block events (a block's start and
   * stop, a tool's input, a citation) go to onEvent, in order with the text: a server tool's result arrives whole in
   * its block's start, before the text that cites it.
   */
  stream(
    ctx: LlmCallContext,
    req: LlmRequest,
    onDelta: (delta: string) => Promise<void>,
    onEvent?: (event: Anthropic.MessageStreamEvent) => Promise<void>,
  ): Promise<LlmResponse>;
}
