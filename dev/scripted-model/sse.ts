import type Anthropic from '@anthropic-ai/sdk';
import { splitEvenly } from './pacing';

/** One server-sent event as the Messages API names it. */
export interface SseEvent {
  event: string;
  data: object;
}

const WORDS_PER_TEXT_DELTA = 3;
const CHARS_PER_JSON_DELTA = 24;

/** Splits text into deltas of a few words each; concatenated they give back the text exactly. */
function textDeltas(text: string): string[] {
  const tokens = text.match(/\s+|\S+\s*/g) ?? [];
  const deltas: string[] = [];
  for (let i = 0; i < tokens.length; i += WORDS_PER_TEXT_DELTA) {
    deltas.push(tokens.slice(i, i + WORDS_PER_TEXT_DELTA).join(''));
  }
  return deltas;
}

function jsonDeltas(input: unknown): string[] {
  const json = JSON.stringify(input);
  const deltas: string[] = [];
  for (let i = 0; i < json.length; i += CHARS_PER_JSON_DELTA) deltas.push(json.slice(i, i + CHARS_PER_JSON_DELTA));
  return deltas;
}

/** What a block streams: its text, or its tool call's input as JSON (a server tool's result comes whole). */
function streamedText(block: Anthropic.ContentBlock): string {
  if (block.type === 'text') return block.text;
  if (block.type === 'tool_use' || block.type === 'server_tool_use') return JSON.stringify(block.input);
  if (isServerToolResult(block)) return '';
  throw new Error(`the scripted model does not stream ${block.type} blocks`);
}

/** Web search's result block, or web fetch's (a beta block the non-beta types do not name). */
const isServerToolResult = (block: { type: string }) =>
  block.type === 'web_search_tool_result' || block.type === 'web_fetch_tool_result';

/** How many pieces a message's streamed content can be cut into: one per code point. */
export const streamableLength = (message: Anthropic.Message) =>
  message.content.reduce((n, block) => n + Array.from(streamedText(block)).length, 0);

/**
 * Each block's deltas: by default a few words (text) or characters (JSON) each; with `pieces`, that
 * many for the block, as even as its characters allow (a paced answer's split, ./pacing.ts). A text block's
 * citations come first, one `citations_delta` each, as the API sends them; a server tool's result has no deltas.
 */
function blockEvents(block: Anthropic.ContentBlock, index: number, pieces?: number): SseEvent[] {
  let start: Anthropic.ContentBlock;
  let deltas: Anthropic.RawContentBlockDelta[];
  if (block.type === 'text') {
    start = { ...block, text: '', citations: null };
    const texts = pieces === undefined ? textDeltas(block.text) : splitEvenly(block.text, pieces);
    deltas = [
      ...(block.citations ?? []).map((citation): Anthropic.RawContentBlockDelta => ({
        type: 'citations_delta',
        citation,
      })),
      ...texts.map((text): Anthropic.RawContentBlockDelta => ({ type: 'text_delta', text })),
    ];
  } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
    start = { ...block, input: {} };
    const parts = pieces === undefined ? jsonDeltas(block.input) : splitEvenly(JSON.stringify(block.input), pieces);
    deltas = parts.map((partial_json) => ({ type: 'input_json_delta', partial_json }));
  } else if (isServerToolResult(block)) {
    start = block;
    deltas = [];
  } else {
    throw new Error(`the scripted model does not stream ${block.type} blocks`);
  }
  return [
    { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } },
    ...deltas.map((delta) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
  ];
}

/**
 * Shares `total` deltas among blocks by their length, at least one each (a block with no text still
 * sends its start and stop, and the split of an empty string is one empty piece).
 */
function deltasPerBlock(message: Anthropic.Message, total: number): number[] {
  const lengths = message.content.map((block) => Array.from(streamedText(block)).length);
  const sum = lengths.reduce((a, b) => a + b, 0);
  return lengths.map((length) => Math.max(1, Math.round((total * length) / Math.max(1, sum))));
}

/**
 * The event sequence the Messages API sends for a message: message_start (empty content, input
 * usage), a ping, then per block start / deltas / stop, then message_delta (stop reason and output
 * usage) and message_stop. `deltas`: about that many content deltas in all (a paced answer's).
 */
export function messageStreamEvents(message: Anthropic.Message, deltas?: number): SseEvent[] {
  const pieces = deltas === undefined ? undefined : deltasPerBlock(message, deltas);
  const start: Anthropic.Message = {
    ...message,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...message.usage, output_tokens: 1 },
  };
  const usage: Anthropic.MessageDeltaUsage = {
    input_tokens: message.usage.input_tokens,
    output_tokens: message.usage.output_tokens,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    server_tool_use: message.usage.server_tool_use,
  };
  return [
    { event: 'message_start', data: { type: 'message_start', message: start } },
    { event: 'ping', data: { type: 'ping' } },
    ...message.content.flatMap((block, index) => blockEvents(block, index, pieces?.[index])),
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

export const encodeSse = ({ event, data }: SseEvent) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
