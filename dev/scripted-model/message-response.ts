import type Anthropic from '@anthropic-ai/sdk';
import { ulid } from 'ulid';
import type { ScriptedCitedText, ScriptedResponse, ScriptedServerToolUse } from './types';
import { firstSentence } from './web-tools';

/** Roughly four characters of English to a token. */
export const CHARS_PER_TOKEN = 4;

/** The scripted model's token count: roughly four characters per token, never zero. */
export const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / CHARS_PER_TOKEN));

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

/** A stable stand-in for the API's opaque encrypted fields: the same text always gives the same value. */
const opaque = (text: string) => Buffer.from(text).toString('base64');

/** The server tools' calls and results, as the API puts them in a reply: each call, then its result. */
function serverToolBlocks(uses: readonly ScriptedServerToolUse[]): Anthropic.ContentBlock[] {
  return uses.flatMap((use): Anthropic.ContentBlock[] => {
    const id = `srvtoolu_${ulid()}`;
    const call = { type: 'server_tool_use', id, name: use.name, input: use.input } as Anthropic.ServerToolUseBlock;
    if (use.name === 'web_search') {
      const { outcome } = use;
      const content: Anthropic.WebSearchToolResultBlockContent =
        'error_code' in outcome
          ? {
              type: 'web_search_tool_result_error',
              error_code: outcome.error_code as Anthropic.WebSearchToolResultError['error_code'],
            }
          : outcome.results.map((page) => ({
              type: 'web_search_result',
              url: page.url,
              title: page.title,
              page_age: page.pageAge,
              encrypted_content: opaque(page.text),
            }));
      return [call, { type: 'web_search_tool_result', tool_use_id: id, content }];
    }
    const { outcome } = use;
    // Web fetch's result is a beta block (the SDK's BetaWebFetchToolResultBlock), not in the non-beta union.
    const result = {
      type: 'web_fetch_tool_result',
      tool_use_id: id,
      content:
        'error_code' in outcome
          ? { type: 'web_fetch_tool_result_error', error_code: outcome.error_code }
          : {
              type: 'web_fetch_result',
              url: outcome.page.url,
              retrieved_at: outcome.retrievedAt,
              content: {
                type: 'document',
                source: { type: 'text', media_type: 'text/plain', data: outcome.page.text },
                title: outcome.page.title,
                citations: { enabled: true },
              },
            },
    } as unknown as Anthropic.ContentBlock;
    return [call, result];
  });
}

/** A text block citing a page found by web search, with the citation the API gives it. */
function citedBlock({ text, page }: ScriptedCitedText): Anthropic.TextBlock {
  const citation: Anthropic.CitationsWebSearchResultLocation = {
    type: 'web_search_result_location',
    url: page.url,
    title: page.title,
    cited_text: firstSentence(page),
    encrypted_index: opaque(page.url),
  };
  return { type: 'text', text, citations: [citation] };
}

/**
 * The Messages API `Message` for a rule's answer. Output past `max_tokens` is cut off the way the
 * real API cuts it: the text stops at the budget, unfinished tool calls are dropped and the stop
 * reason says `max_tokens`. The server tools a rule used come first, each call with its result, and are
 * billed in `usage.server_tool_use` (web searches).
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
  const serverUses = response.serverToolUse ?? [];
  const cited = response.cited ? [citedBlock(response.cited)] : [];
  const fullOutput =
    text +
    cited.map((block) => block.text).join('') +
    [...serverUses, ...toolBlocks].map((block) => JSON.stringify(block.input)).join('');
  const truncated = estimateTokens(fullOutput) > maxTokens;
  const keptText = truncated ? text.slice(0, maxTokens * 4) : text;
  const content: Anthropic.ContentBlock[] = [
    ...serverToolBlocks(serverUses),
    ...(keptText ? [{ type: 'text' as const, text: keptText, citations: null }] : []),
    ...(truncated ? [] : [...cited, ...toolBlocks]),
  ];
  const stopReason: Anthropic.StopReason = truncated ? 'max_tokens' : toolBlocks.length > 0 ? 'tool_use' : 'end_turn';
  const searches = serverUses.filter((use) => use.name === 'web_search').length;
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
      server_tool_use: searches > 0 ? { web_search_requests: searches } : null,
      service_tier: 'standard',
    },
  };
}
