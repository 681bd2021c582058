import type Anthropic from '@anthropic-ai/sdk';
import { ulid } from 'ulid';
import type { ScriptedResponse } from './types';

/** The scripted model's token count: roughly four characters per token, never zero. */
export const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/**
 * A `malformed` fault: the first half of what the rule would have said, as plain text. A JSON answer
 * becomes truncated JSON (`{"main_agent": "Data Sc`), a one-word label becomes a wrong word.
 */
export function malformedVariant(response: ScriptedResponse): ScriptedResponse {
  const whole = 'toolUse' in response ? JSON.stringify(response.toolUse.map((call) => call.input)) : response.text;
  return { text: whole.slice(0, Math.ceil(whole.length / 2)) };
}

interface BuildMessageInput {
  model: string;
  maxTokens: number;
  inputTokens: number;
  response: ScriptedResponse;
}

/**
 * The Messages API `Message` for a rule's answer. Output past `max_tokens` is cut off the way the
 * real API cuts it: the text stops at the budget, unfinished tool calls are dropped and the stop
 * reason says `max_tokens`.
 */
export function buildMessage({ model, maxTokens, inputTokens, response }: BuildMessageInput): Anthropic.Message {
  const toolUse = 'toolUse' in response ? response.toolUse : [];
  const text = response.text ?? '';
  const toolBlocks: Anthropic.ToolUseBlock[] = toolUse.map(({ name, input }) => ({
    type: 'tool_use',
    id: `toolu_${ulid()}`,
    name,
    input,
  }));
  const fullOutput = text + toolBlocks.map((block) => JSON.stringify(block.input)).join('');
  const truncated = estimateTokens(fullOutput) > maxTokens;
  const keptText = truncated ? text.slice(0, maxTokens * 4) : text;
  const content: Anthropic.ContentBlock[] = [
    ...(keptText ? [{ type: 'text' as const, text: keptText, citations: null }] : []),
    ...(truncated ? [] : toolBlocks),
  ];
  const stopReason: Anthropic.StopReason = truncated ? 'max_tokens' : toolBlocks.length > 0 ? 'tool_use' : 'end_turn';
  return {
    id: `msg_${ulid()}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: inputTokens,
      output_tokens: truncated ? maxTokens : estimateTokens(fullOutput),
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      cache_creation: null,
      server_tool_use: null,
      service_tier: 'standard',
    },
  };
}
