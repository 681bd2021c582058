/**
 * Each model call is a span that any GenAI-aware backend reads (Langfuse, Phoenix, Grafana): named
 * `chat <model>` and carrying the OpenTelemetry GenAI semantic conventions (the model asked for and
 * the one that answered, the token counts, why it stopped), with our step id, attempt and cost. The
 * messages and the answer are on it only when AMY_OTEL_CAPTURE_CONTENT=true (../spans.ts); a failed
 * call says its error class (`UpstreamUnavailableError`, …) and Anthropic's request id, never the text.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { SpanKind, type Span } from '@opentelemetry/api';
import { wrapMethods } from '../method-wrappers';
import { ATTR_TURN_ID, capturingContent, inSpan } from '../spans';
import { LlmError } from './errors';
import type { Llm, LlmCallContext, LlmRequest, LlmResponse } from './llm';
import { resolveModel, type ModelOverrides } from './models';

/**
 * The GenAI conventions' names, copied rather than imported: they are in the semantic conventions
 * package's incubating entry point, which may change them in any minor release (its README says to copy).
 */
const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  /** The older name of `gen_ai.provider.name`, which backends still read. */
  system: 'gen_ai.system',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

/** Which call of which step (contracts/steps.ts), which attempt of it, what it cost, Anthropic's request id. */
const ATTR_STEP = 'amy.step';
const ATTR_ATTEMPT = 'amy.attempt';
const ATTR_COST_USD = 'amy.cost_usd';
const ATTR_REQUEST_ID = 'amy.anthropic.request_id';
/** The web searches the Messages API ran inside the call (billed per search), from its usage. */
const ATTR_WEB_SEARCH_REQUESTS = 'amy.server_tool.web_search_requests';

type ContentBlock = Anthropic.ContentBlockParam | Anthropic.ContentBlock;

/** A message's content as the conventions' parts. */
function parts(content: string | ContentBlock[]): object[] {
  if (typeof content === 'string') return [{ type: 'text', content }];
  return content.map((block) => {
    switch (block.type) {
      case 'text':
        return { type: 'text', content: block.text };
      case 'tool_use':
        return { type: 'tool_call', id: block.id, name: block.name, arguments: block.input };
      case 'tool_result':
        return { type: 'tool_call_response', id: block.tool_use_id, response: block.content };
      default:
        return { type: block.type };
    }
  });
}

/** Anthropic's stop reasons in the conventions' words. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_call',
};

function recordRequestContent(span: Span, req: LlmRequest): void {
  if (req.system) span.setAttribute(GEN_AI.systemInstructions, JSON.stringify([{ type: 'text', content: req.system }]));
  span.setAttribute(
    GEN_AI.inputMessages,
    JSON.stringify(req.messages.map((m) => ({ role: m.role, parts: parts(m.content) }))),
  );
}

function recordResponse(span: Span, response: LlmResponse): void {
  const { message } = response;
  span.setAttributes({
    [GEN_AI.responseModel]: message.model,
    [GEN_AI.responseId]: message.id,
    [GEN_AI.usageInputTokens]: message.usage.input_tokens,
    [GEN_AI.usageOutputTokens]: message.usage.output_tokens,
    [ATTR_COST_USD]: response.costUsd,
  });
  if (message.stop_reason) span.setAttribute(GEN_AI.responseFinishReasons, [message.stop_reason]);
  if (message.usage.cache_read_input_tokens) {
    span.setAttribute(GEN_AI.usageCacheReadInputTokens, message.usage.cache_read_input_tokens);
  }
  if (message.usage.cache_creation_input_tokens) {
    span.setAttribute(GEN_AI.usageCacheCreationInputTokens, message.usage.cache_creation_input_tokens);
  }
  if (response.requestId) span.setAttribute(ATTR_REQUEST_ID, response.requestId);
  const searches = message.usage.server_tool_use?.web_search_requests;
  if (searches) span.setAttribute(ATTR_WEB_SEARCH_REQUESTS, searches);
  if (capturingContent()) {
    const finishReason = FINISH_REASONS[message.stop_reason ?? ''] ?? message.stop_reason ?? 'stop';
    span.setAttribute(
      GEN_AI.outputMessages,
      JSON.stringify([{ role: 'assistant', parts: parts(message.content), finish_reason: finishReason }]),
    );
  }
}

/** `call` in its span, named for the model it will be made with (resolved as the LLM layer resolves it). */
function traced(
  overrides: ModelOverrides,
  ctx: LlmCallContext,
  req: LlmRequest,
  call: () => Promise<LlmResponse>,
): Promise<LlmResponse> {
  const model = resolveModel(req.model, overrides);
  const attributes = {
    [GEN_AI.operationName]: 'chat',
    [GEN_AI.providerName]: 'anthropic',
    [GEN_AI.system]: 'anthropic',
    [GEN_AI.requestModel]: model,
    [GEN_AI.requestMaxTokens]: req.maxTokens,
    ...(req.temperature === undefined ? {} : { [GEN_AI.requestTemperature]: req.temperature }),
    [ATTR_TURN_ID]: ctx.turnId,
    [ATTR_STEP]: ctx.step,
    [ATTR_ATTEMPT]: ctx.attempt,
  };
  return inSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    if (capturingContent()) recordRequestContent(span, req);
    try {
      const response = await call();
      recordResponse(span, response);
      return response;
    } catch (err) {
      if (err instanceof LlmError && err.requestId) span.setAttribute(ATTR_REQUEST_ID, err.requestId);
      throw err;
    }
  });
}

/** The LLM layer with each call in its span (see the module comment). */
export function traceModelCalls(overrides: ModelOverrides, llm: Llm): Llm {
  return wrapMethods(llm, {
    complete: (complete, ctx, req) => traced(overrides, ctx, req, complete),
    stream: (stream, ctx, req) => traced(overrides, ctx, req, stream),
  });
}
