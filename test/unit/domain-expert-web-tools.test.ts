/**
 * The Domain Expert's server tools, one module at a time: what is offered (AMY_DE_WEB_TOOLS, AMY_DE_WEB_DOMAINS, the
 * circuit), what the watch of a reply learns and names from the Messages API's events, what a search costs, and the
 * configuration's checks. The whole loop, through the SDK and the scripted model, is test/steps/domain-expert-web.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { WebReplyWatch, WebToolRefused, webToolDefinitions } from '../../activities/agents/domain-expert/web-tools';
import { StreamingUrlGuard } from '../../activities/agents/domain-expert/url-guard';
import { ConfigError, loadConfig } from '../../platform/config';
import { createCircuitBreaker } from '../../platform/literature/circuit';
import type { WebToolName, WebToolSettings } from '../../platform/literature/network-tools';
import { costUsd } from '../../platform/llm/prices';

const settings = (tools: WebToolName[], allowedDomains: string[] = []): WebToolSettings => ({
  tools,
  allowedDomains,
  circuit: createCircuitBreaker({ failureThreshold: 2, coolDownMs: 60_000 }),
});

const PRIVACY = {
  memoryTexts: ['Training for the Lisbon half marathon in March'],
  userMessages: ['Why do I wake up so tired after the night shifts at the bakery?'],
  userValues: [{ value: 58, kind: 'salient' as const }],
  userIdentifiers: ['usr_x'],
};

describe('what a consultation is offered', () => {
  test('nothing without web tools configured', () => {
    expect(webToolDefinitions(null)).toEqual([]);
    expect(webToolDefinitions(undefined)).toEqual([]);
  });

  test('web search, and web fetch (a beta tool) with citations, both held to the configured domains', () => {
    expect(webToolDefinitions(settings(['web_search', 'web_fetch'], ['nih.gov', 'who.int']))).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['nih.gov', 'who.int'] },
      {
        type: 'web_fetch_20250910',
        name: 'web_fetch',
        max_uses: 3,
        max_content_tokens: 8000,
        citations: { enabled: true },
        allowed_domains: ['nih.gov', 'who.int'],
      },
    ]);
  });

  test('without domains, any; a tool whose circuit is open is not offered until it cools down', () => {
    const web = settings(['web_search', 'web_fetch']);
    expect(webToolDefinitions(web)[0]).not.toHaveProperty('allowed_domains');
    web.circuit.report('web_search', false);
    web.circuit.report('web_search', false);
    expect(webToolDefinitions(web).map((tool) => tool.name)).toEqual(['web_fetch']);
  });
});

/** The events of a reply that searched, then wrote a passage citing the first result, as the API streams them. */
function searchedReply(query: string): Anthropic.MessageStreamEvent[] {
  const url = 'https://www.nih.gov/hrv';
  return [
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query": ' } },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: `${JSON.stringify(query)}}` },
    },
    { type: 'content_block_stop', index: 0 },
    {
      type: 'content_block_start',
      index: 1,
      content_block: {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [
          { type: 'web_search_result', url, title: 'HRV [an overview]', encrypted_content: 'x', page_age: null },
        ],
      },
    },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '', citations: null } },
    {
      type: 'content_block_delta',
      index: 2,
      delta: {
        type: 'citations_delta',
        citation: {
          type: 'web_search_result_location',
          url,
          title: 'HRV [an overview]',
          cited_text: 'c',
          encrypted_index: 'i',
        },
      },
    },
    { type: 'content_block_stop', index: 2 },
  ];
}

describe('the watch of a reply', () => {
  test('learns the URLs a search returned, and names a cited source after its passage, once', () => {
    const allowed = new Set<string>();
    const web = settings(['web_search']);
    const watch = new WebReplyWatch(new StreamingUrlGuard(allowed), PRIVACY, web, allowed);
    const added = searchedReply('heart rate variability').map(watch.onEvent);
    expect(allowed).toEqual(new Set(['https://www.nih.gov/hrv']));
    expect(added.join('')).toBe(' ([HRV an overview](https://www.nih.gov/hrv))');
    // The same source cited again in the reply is not named twice.
    expect(searchedReply('heart rate variability').map(watch.onEvent).join('')).toBe('');
  });

  test.each([
    ['a value of the user’s', 'resting heart rate 58 age'],
    ['the memory shown to the model', 'training for the Lisbon half marathon in March'],
    ['the user’s words', 'wake up so tired after the night shifts at the bakery'],
  ])('stops the reply when a search query carries %s, saying why without repeating it', (_what, query) => {
    const allowed = new Set<string>();
    const watch = new WebReplyWatch(new StreamingUrlGuard(allowed), PRIVACY, settings(['web_search']), allowed);
    const events = searchedReply(query);
    expect(() => events.forEach(watch.onEvent)).toThrow(WebToolRefused);
    expect(watch.refusal).toMatch(/^a search query was refused/);
    expect(watch.refusal!.toLowerCase()).not.toContain(query.toLowerCase());
    // Stopped before its result: nothing it would have returned may be cited.
    expect(allowed.size).toBe(0);
  });

  test('an error result counts towards the tool’s circuit; a request the API refused does not', () => {
    const web = settings(['web_search']);
    const allowed = new Set<string>();
    const watch = new WebReplyWatch(new StreamingUrlGuard(allowed), PRIVACY, web, allowed);
    const failed = (error_code: string): Anthropic.MessageStreamEvent => ({
      type: 'content_block_start',
      index: 1,
      content_block: {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: { type: 'web_search_tool_result_error', error_code } as Anthropic.WebSearchToolResultError,
      },
    });
    watch.onEvent(failed('max_uses_exceeded'));
    watch.onEvent(failed('invalid_tool_input'));
    expect(web.circuit.state('web_search')).toBe('closed');
    watch.onEvent(failed('unavailable'));
    watch.onEvent(failed('too_many_requests'));
    expect(web.circuit.state('web_search')).toBe('open');
  });
});

test('a web search is billed at $10 per 1,000 on top of the tokens', () => {
  expect(costUsd('claude-sonnet-4-6', 1_000_000, 0, { webSearchRequests: 2 })).toBe(3.02);
  expect(costUsd('claude-sonnet-4-6', 1_000_000, 0)).toBe(3);
});

describe('AMY_DE_WEB_TOOLS and AMY_DE_WEB_DOMAINS', () => {
  const base = { DATABASE_URL: 'postgresql://localhost:5432/amy' };

  test('none and any by default; lists, trimmed, de-duplicated, domains lower-cased', () => {
    expect(loadConfig(base)).toMatchObject({ AMY_DE_WEB_TOOLS: [], AMY_DE_WEB_DOMAINS: [] });
    const config = loadConfig({
      ...base,
      AMY_DE_WEB_TOOLS: ' web_search, web_fetch ,web_search',
      AMY_DE_WEB_DOMAINS: 'NIH.gov, who.int',
    });
    expect(config).toMatchObject({
      AMY_DE_WEB_TOOLS: ['web_search', 'web_fetch'],
      AMY_DE_WEB_DOMAINS: ['nih.gov', 'who.int'],
    });
  });

  test('an unknown tool or something that is not a domain is refused at start-up, by name', () => {
    expect(() => loadConfig({ ...base, AMY_DE_WEB_TOOLS: 'web_crawl' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, AMY_DE_WEB_TOOLS: 'web_crawl' })).toThrow(/AMY_DE_WEB_TOOLS/);
    expect(() => loadConfig({ ...base, AMY_DE_WEB_DOMAINS: 'https://nih.gov' })).toThrow(/AMY_DE_WEB_DOMAINS/);
  });
});
