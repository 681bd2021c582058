import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { STEP_INPUTS_FIELD, type ModelCallId } from '../../contracts/steps';
import type { ModelCallInputs } from '../../activities/runtime/model-call-inputs';
import type { ScriptedRequest } from './types';
import type { ScriptedWeb, ServerToolSpec } from './web-tools';

/**
 * The part of the Messages API request body the scripted model relies on. Checked the way the real
 * API checks it, so a malformed request from our own code fails here as it would in production.
 * Unknown top-level fields (metadata, tool_choice, stop_sequences…) are accepted and ignored.
 */
const textBlock = z.object({
  type: z.literal('text'),
  text: z.string().min(1),
  citations: z.array(z.unknown()).nullable().optional(),
});
const toolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
});
const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(textBlock)]).optional(),
  is_error: z.boolean().optional(),
});
/** The server tools' blocks a caller sends back as it received them (only their shape is checked). */
const serverToolUseBlock = z.object({
  type: z.literal('server_tool_use'),
  id: z.string().min(1),
  name: z.enum(['web_search', 'web_fetch']),
  input: z.record(z.string(), z.unknown()),
});
const serverToolResultBlock = z.object({
  type: z.enum(['web_search_tool_result', 'web_fetch_tool_result']),
  tool_use_id: z.string().min(1),
  content: z.union([z.array(z.looseObject({ type: z.string() })), z.looseObject({ type: z.string() })]),
});
const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  toolUseBlock,
  toolResultBlock,
  serverToolUseBlock,
  serverToolResultBlock,
]);

const messageParam = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string().min(1), z.array(contentBlock).min(1)]),
});

const toolDefinition = z.object({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$'),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
});

const domains = z.array(z.string().min(1)).min(1).optional();
const serverTool = z
  .object({
    type: z.enum(['web_search_20250305', 'web_fetch_20250910']),
    name: z.enum(['web_search', 'web_fetch']),
    max_uses: z.number().int().min(1).optional(),
    allowed_domains: domains,
    blocked_domains: domains,
    max_content_tokens: z.number().int().min(1).optional(),
    citations: z.object({ enabled: z.boolean() }).optional(),
    user_location: z.unknown().optional(),
  })
  .refine((t) => t.name === (t.type === 'web_search_20250305' ? 'web_search' : 'web_fetch'), 'name does not match type')
  .refine((t) => !(t.allowed_domains && t.blocked_domains), 'cannot use both allowed_domains and blocked_domains');

const messagesRequestSchema = z.object({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  messages: z.array(messageParam).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(z.union([serverTool, toolDefinition])).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  /** Not part of the Messages API: the call's inputs, which only our LLM client sends, and only here. */
  [STEP_INPUTS_FIELD]: z.unknown().optional(),
});

export interface MessagesRequest {
  model: string;
  maxTokens: number;
  stream: boolean;
  system: string;
  messages: Anthropic.MessageParam[];
  tools: Anthropic.Tool[];
  /** The Messages API's own tools it offers (web search, web fetch). */
  serverTools: ServerToolSpec[];
  /** The `amy_step_inputs` field as sent (undefined when absent); step-inputs.ts checks it. */
  stepInputs: unknown;
}

export type ParsedMessagesRequest = { ok: true; request: MessagesRequest } | { ok: false; message: string };

/** Validates a request body; on failure the message names the first offending field, Anthropic-style. */
export function parseMessagesRequest(body: unknown): ParsedMessagesRequest {
  const parsed = messagesRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return { ok: false, message: `${where}${issue.message}` };
  }
  const { model, max_tokens, messages, system, tools, stream, [STEP_INPUTS_FIELD]: stepInputs } = parsed.data;
  return {
    ok: true,
    request: {
      model,
      maxTokens: max_tokens,
      stream: stream ?? false,
      system: typeof system === 'string' ? system : (system ?? []).map((block) => block.text).join('\n'),
      // The schema above is a subset of the SDK's types, so the validated values are valid params.
      messages: messages as Anthropic.MessageParam[],
      tools: (tools ?? []).filter((t) => !('type' in t)) as Anthropic.Tool[],
      serverTools: (tools ?? []).flatMap((t) => ('type' in t ? [t] : [])),
      stepInputs,
    },
  };
}

export function toScriptedRequest<Call extends ModelCallId>(
  step: Call,
  inputs: ModelCallInputs[Call],
  request: MessagesRequest,
  web: ScriptedWeb,
): ScriptedRequest<Call> {
  return { step, inputs, model: request.model, messages: request.messages, tools: request.tools, web };
}

/** Every character the model would read: system, messages (text, tool calls and results) and tools. */
export function requestText(request: MessagesRequest): string {
  const parts = [request.system];
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      parts.push(message.content);
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') parts.push(block.text);
      else if (block.type === 'tool_use') parts.push(block.name, JSON.stringify(block.input));
      else if (block.type === 'tool_result') parts.push(JSON.stringify(block.content ?? ''));
    }
  }
  if (request.tools.length > 0 || request.serverTools.length > 0) {
    parts.push(JSON.stringify([...request.tools, ...request.serverTools]));
  }
  return parts.join('\n');
}
