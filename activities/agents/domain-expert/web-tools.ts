/**
 * Web search and web fetch, the Messages API's own server tools (docs/operations.md#network-tools): the API runs
 * them inside the model's reply, so there is no crawler of ours. What the service still owns, it does here, on the
 * reply's events as they stream (`WebReplyWatch`):
 *
 * - the URL guard learns every URL a search or fetch result returns, before the text that cites it arrives;
 * - a cited passage names its source, `[title](url)`, the first time the reply cites it;
 * - a search query is checked by the outgoing query guard as soon as the model has written it, and a fetch must be
 *   of a URL a tool of this consultation returned. The API runs the tool right after the model writes its input, so
 *   a refused one may already have been sent: the reply is stopped there, the web tools are withdrawn for the rest
 *   of the consultation and the model is told why (the limit of a tool we do not run, documented with it);
 * - each result counts by tool and outcome, and a tool whose results keep failing (the API's `unavailable`,
 *   `too_many_requests`) is not offered for a while (its circuit).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { guardOutgoingQuery } from '../../../checks/outgoing-query-guard';
import type { LlmTool } from '../../../platform/llm';
import type { WebToolName, WebToolSettings } from '../../../platform/literature/network-tools';
import { metrics } from '../../../platform/metrics';
import type { OutgoingPrivacy } from './outgoing-privacy';
import type { StreamingUrlGuard } from './url-guard';

/** At most this many searches, and fetches, per model call: the API refuses more with `max_uses_exceeded`. */
const MAX_USES_PER_CALL = 3;
/** Web fetch's page text, in tokens: a long page is cut, so one fetch cannot fill the context. */
const MAX_FETCHED_TOKENS = 8000;

/** Error codes that say the tool is unhealthy (towards its circuit); the others are the request's fault. */
const UNHEALTHY = new Set(['unavailable', 'too_many_requests']);

/** The server tools a model call offers: those configured whose circuit is not open. */
export function webToolDefinitions(web: WebToolSettings | null | undefined): LlmTool[] {
  if (!web) return [];
  const domains = web.allowedDomains.length > 0 ? { allowed_domains: [...web.allowedDomains] } : {};
  return web.tools
    .filter((tool) => web.circuit.state(tool) !== 'open')
    .map((tool): LlmTool =>
      tool === 'web_search'
        ? { type: 'web_search_20250305', name: 'web_search', max_uses: MAX_USES_PER_CALL, ...domains }
        : {
            type: 'web_fetch_20250910',
            name: 'web_fetch',
            max_uses: MAX_USES_PER_CALL,
            max_content_tokens: MAX_FETCHED_TOKENS,
            citations: { enabled: true },
            ...domains,
          },
    );
}

/** Thrown by the watch to stop a reply whose server tool input was refused; the consultation goes on without them. */
export class WebToolRefused extends Error {
  override name = 'WebToolRefused';
}

/** What the model is told when its web tools were withdrawn, in words that do not repeat the query. */
export const webToolsWithdrawnNote = (reason: string) =>
  `Web search and fetch were withdrawn for this consultation: ${reason}. ` +
  "Answer from the other tools; never put the user's details or numbers in a query.";

/** A result block of a server tool, as the stream's `content_block_start` carries it (web fetch's type is beta). */
interface ServerResultBlock {
  type: 'web_search_tool_result' | 'web_fetch_tool_result';
  content: unknown;
}

const isServerResult = (block: { type: string }): block is ServerResultBlock =>
  block.type === 'web_search_tool_result' || block.type === 'web_fetch_tool_result';

const errorCodeOf = (content: unknown): string | null =>
  typeof content === 'object' && content !== null && 'error_code' in content ? String(content.error_code) : null;

/** `[Title](url)`, with the brackets a title may hold taken out so the link stays one. */
function sourceLink(title: string | null, url: string): string {
  const name = (title ?? '').replace(/[[\]]/g, ' ').replace(/\s+/g, ' ').trim() || new URL(url).hostname;
  return `[${name}](${url})`;
}

/**
 * Watches one model reply's events for the server tools (see the module comment). `onEvent` returns text to add
 * to the reply: a cited source's name.
 */
export class WebReplyWatch {
  /** Why the reply was stopped (a refused query or URL), for the model; null while nothing was refused. */
  refusal: string | null = null;
  private readonly serverCalls = new Map<number, { name: string; json: string }>();
  private readonly citedInBlock = new Map<number, { url: string; title: string | null }[]>();
  private readonly named = new Set<string>();

  constructor(
    private readonly guard: StreamingUrlGuard,
    private readonly privacy: OutgoingPrivacy,
    private readonly web: WebToolSettings,
    /** URLs a tool returned in this consultation: the only ones web fetch may be asked for. */
    private readonly toolUrls: ReadonlySet<string>,
  ) {}

  onEvent = (event: Anthropic.MessageStreamEvent): string => {
    if (event.type === 'content_block_start') {
      const block = event.content_block as { type: string };
      if (block.type === 'server_tool_use') {
        this.serverCalls.set(event.index, {
          name: (event.content_block as Anthropic.ServerToolUseBlock).name,
          json: '',
        });
      } else if (isServerResult(block)) {
        this.learn(block);
      }
      return '';
    }
    if (event.type === 'content_block_delta') {
      if (event.delta.type === 'input_json_delta') {
        const call = this.serverCalls.get(event.index);
        if (call) call.json += event.delta.partial_json;
      } else if (event.delta.type === 'citations_delta') {
        const citation = event.delta.citation;
        if (citation.type === 'web_search_result_location') {
          const cited = this.citedInBlock.get(event.index) ?? [];
          cited.push({ url: citation.url, title: citation.title });
          this.citedInBlock.set(event.index, cited);
        }
      }
      return '';
    }
    if (event.type === 'content_block_stop') {
      const call = this.serverCalls.get(event.index);
      if (call) this.check(call);
      return this.sourcesOf(event.index);
    }
    return '';
  };

  /** A server tool's input, once the model has written it whole: refused, the reply stops here. */
  private check(call: { name: string; json: string }): void {
    let input: Record<string, unknown> = {};
    try {
      input = JSON.parse(call.json || '{}') as Record<string, unknown>;
    } catch {
      // Not JSON: the API answers it with invalid_tool_input, which is counted as the result comes.
    }
    if (call.name === 'web_search') {
      const verdict = guardOutgoingQuery({ query: String(input.query ?? ''), ...this.privacy });
      if (!verdict.allowed) this.refuse('web_search', `a search query was refused (${verdict.message})`);
    } else if (call.name === 'web_fetch') {
      const url = String(input.url ?? '');
      if (!this.toolUrls.has(url)) this.refuse('web_fetch', 'web fetch was asked for a URL no tool had returned');
    }
  }

  private refuse(tool: WebToolName, reason: string): never {
    metrics.domainExpertToolCall(tool, 'privacy_refused');
    this.refusal = reason;
    throw new WebToolRefused(reason);
  }

  /** A result: its URLs may be cited from now on; its outcome is counted and reported to the tool's circuit. */
  private learn(block: ServerResultBlock): void {
    const tool: WebToolName = block.type === 'web_search_tool_result' ? 'web_search' : 'web_fetch';
    const code = errorCodeOf(block.content);
    if (code === null) {
      for (const url of resultUrls(block.content)) this.guard.allow(url);
    }
    metrics.domainExpertToolCall(tool, code ?? 'ok');
    if (code === null || UNHEALTHY.has(code)) this.web.circuit.report(tool, code === null);
  }

  /** The sources a text block cited that the reply has not named yet, after the block, as links. */
  private sourcesOf(index: number): string {
    const links = (this.citedInBlock.get(index) ?? [])
      .filter(({ url }) => !this.named.has(url) && (this.named.add(url), true))
      .map(({ url, title }) => sourceLink(title, url));
    return links.length > 0 ? ` (${links.join('; ')})` : '';
  }
}

/** The URLs of a search's results, or of a fetched page. */
function resultUrls(content: unknown): string[] {
  const items = Array.isArray(content) ? content : [content];
  return items.flatMap((item: unknown) =>
    typeof item === 'object' && item !== null && 'url' in item && typeof item.url === 'string' ? [item.url] : [],
  );
}
