/**
 * The Domain Expert with the Messages API's server tools (AMY_DE_WEB_TOOLS): through the real SDK and LLM layer to
 * the scripted model, which runs web search and fetch inside its reply and streams them as the API does
 * (`server_tool_use`, `web_search_tool_result`, `web_fetch_tool_result`, `citations_delta`). The answer may cite a page
 * a search of that reply found, and names it; the searches are billed; the configured domains bound what is found; a
 * failing server tool is the tool's, not the turn's, and is not offered again once its circuit opens.
 */
import { consultWithNetworkTools, standInPubMed } from '../support/domain-expert-consult';
import { domainExpert } from '../../dev/scripted-model/rules/domain-expert';
import { startEutilsStandIn } from '../../dev/stand-ins/eutils';
import type { StandInServer } from '../../dev/stand-ins/http-knobs';
import type { ScriptedRequest, ScriptedResponse, ScriptedRule } from '../../dev/scripted-model/types';
import { createCircuitBreaker, type CircuitBreaker } from '../../platform/literature/circuit';
import type { NetworkTools, WebToolName } from '../../platform/literature/network-tools';
import { costUsd } from '../../platform/llm/prices';
import { startStepHarness, type StepHarness } from '../support/step-harness';

let cannedRespond: (req: ScriptedRequest) => ScriptedResponse = () => ({ text: 'unset' });
const canned: ScriptedRule = { step: 'domain_expert', respond: (req) => cannedRespond(req) };

let h: StepHarness;
let c: StepHarness;
let eutils: StandInServer;
beforeAll(async () => {
  [h, c, eutils] = await Promise.all([
    startStepHarness({ rules: [domainExpert] }),
    startStepHarness({ rules: [canned] }),
    startEutilsStandIn(),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), c?.close(), eutils?.close()]);
});
beforeEach(() => {
  for (const harness of [h, c]) {
    harness.scripted.faults.clear();
    harness.scripted.requests.clear();
  }
});

const QUESTION = 'What is heart rate variability?';
const HRV_PAGE = 'https://heart-reference.example.org/hrv-explained';

function networkTools(web: {
  tools: WebToolName[];
  allowedDomains?: string[];
  circuit?: CircuitBreaker;
}): NetworkTools {
  return {
    pubmed: standInPubMed(eutils.url),
    dataCommons: null,
    web: {
      tools: web.tools,
      allowedDomains: web.allowedDomains ?? [],
      circuit: web.circuit ?? createCircuitBreaker({ failureThreshold: 3, coolDownMs: 60_000 }),
    },
  };
}

const MEMORY = '- Prefers evidence from randomised trials';

const consult = (tools: NetworkTools, harness = h) => consultWithNetworkTools(harness, tools, QUESTION, MEMORY);

/** The Domain Expert's requests to the model, as the scripted model received them. */
const deRequests = (harness = h) => harness.scripted.requests.entries().filter((r) => r.step === 'domain_expert');

test('web search: the answer cites a page the search found, names it, and the search is billed', async () => {
  const result = await consult(networkTools({ tools: ['web_search'] }));
  for (const request of deRequests()) expect(request.betas).toEqual([]);

  expect(result.urls).toContain(HRV_PAGE);
  // The cited passage is followed by its source, named as a link.
  expect(result.answer).toContain(`On the web, "Heart rate variability explained" says:`);
  expect(result.answer).toContain(`([Heart rate variability explained](${HRV_PAGE}))`);

  // The ledger row of the answering call includes the search's fee ($10 per 1,000) on top of its tokens.
  const { rows } = await h.deps.pool.query<{
    model: string;
    input_tokens: number;
    output_tokens: number;
    cost: string;
  }>(
    `SELECT model, input_tokens, output_tokens, cost_usd::text AS cost FROM llm_calls
     WHERE turn_id = $1 AND step = 'domain_expert' ORDER BY created_at`,
    [result.turnId],
  );
  const last = rows.at(-1)!;
  expect(Number(last.cost)).toBeCloseTo(
    costUsd(last.model, last.input_tokens, last.output_tokens, { webSearchRequests: 1 }),
    6,
  );
  expect(Number(last.cost)).toBeGreaterThan(costUsd(last.model, last.input_tokens, last.output_tokens));
});

test('web fetch is sent with its beta header and fetches a page the search returned; its URL may be cited', async () => {
  const result = await consult(networkTools({ tools: ['web_search', 'web_fetch'] }));
  expect(result.urls).toContain(HRV_PAGE);
  expect(result.answer).not.toMatch(/could not search the web/);
  for (const request of deRequests()) {
    expect(request.tools).toEqual(expect.arrayContaining(['web_search', 'web_fetch']));
    expect(request.betas).toEqual(['web-fetch-2025-09-10']);
  }
});

test('the configured domains bound the search: a page outside them is never found, so never cited', async () => {
  const result = await consult(networkTools({ tools: ['web_search'], allowedDomains: ['nih.gov'] }));
  expect(result.urls.some((url) => url.includes('example.org'))).toBe(false);
  expect(result.answer).not.toContain('On the web');
});

test('a failing web search is the tool’s failure: the answer says so, and after three the tool is not offered', async () => {
  const circuit = createCircuitBreaker({ failureThreshold: 3, coolDownMs: 60_000 });
  h.scripted.faults.inject({ kind: 'web_tools_unavailable', step: 'domain_expert', times: -1 });
  for (let i = 0; i < 3; i++) {
    const result = await consult(networkTools({ tools: ['web_search'], circuit }));
    expect(result.answer).toMatch(/could not search the web just now/);
    expect(result.urls.some((url) => url.includes('example.org'))).toBe(false);
  }
  expect(circuit.state('web_search')).toBe('open');

  h.scripted.requests.clear();
  const result = await consult(networkTools({ tools: ['web_search'], circuit }));
  // Not offered: the answer neither searched nor says it could not.
  expect(result.answer).not.toMatch(/could not search the web/);
  expect(deRequests().length).toBeGreaterThan(0);
  for (const request of deRequests()) expect(request.tools).not.toContain('web_search');
});

test("a search query carrying the user's memory is refused as it is written: the reply is stopped, the web tools withdrawn, and the consultation answers without them", async () => {
  cannedRespond = (req) => {
    if (!req.web.search) return { text: 'Heart rate variability is the beat-to-beat variation of the heart rate.' };
    // A careless model that puts what it remembers of the user into the query.
    const query = 'heart rate variability prefers evidence from randomised trials';
    return {
      text: 'Let me look that up.',
      serverToolUse: [{ name: 'web_search', input: { query }, outcome: req.web.search(query) }],
    };
  };
  const result = await consult(networkTools({ tools: ['web_search'] }), c);

  expect(result.answer).toBe('Heart rate variability is the beat-to-beat variation of the heart rate.');
  const [first, second] = deRequests(c);
  expect(first.tools).toContain('web_search');
  expect(second.tools).not.toContain('web_search');
  // The model is told why, in words that do not repeat the query.
  const note = JSON.stringify(second.messages.at(-1));
  expect(note).toContain('Web search and fetch were withdrawn for this consultation');
  expect(note).not.toContain('randomised');
});

test('web fetch of a URL no tool returned is refused the same way', async () => {
  cannedRespond = (req) => {
    if (!req.web.fetch) return { text: 'Answered without the web.' };
    const url = 'https://heart-reference.example.org/resting-heart-rate';
    return { text: '', serverToolUse: [{ name: 'web_fetch', input: { url }, outcome: req.web.fetch(url) }] };
  };
  const result = await consult(networkTools({ tools: ['web_fetch'] }), c);
  expect(result.answer).toBe('Answered without the web.');
  expect(deRequests(c).map((r) => r.tools.includes('web_fetch'))).toEqual([true, false]);
});
