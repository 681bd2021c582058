/**
 * The Domain Expert's network tools end to end (AMY_DE_NETWORK_TOOLS=true), on the real service: the compiled API and
 * worker, real Temporal and Postgres, the scripted model, and the E-utilities stand-in as PubMed. A knowledge
 * question asked through the HTTP API and followed over SSE:
 *
 * - is answered with a citation of an article PubMed returned for that turn (its title, journal, year and PubMed
 *   URL), the search carrying the topic alone and the contact address the service was configured with, and the
 *   fact-check leaving the citation as it was, its year and PMID and any number in its title;
 * - still completes when PubMed answers 503 or not at all within the timeout, saying the literature could not be
 *   searched, with no PubMed URL and no URL no tool returned;
 * - cites, with its source named, a page the Messages API's web search found in the Domain Expert's reply
 *   (AMY_DE_WEB_TOOLS, run here by the scripted model);
 * - never shows a URL the model invented, in the answer or in any event of the stream, while the PubMed URL the
 *   search returned stays.
 *
 * The last two cases have the scripted Domain Expert add a sentence to its answer: a citation of a title with numbers
 * in it (the rule itself cites only the first article found), or a URL no tool returned.
 *
 * A search that succeeded is cached in Postgres (platform/literature/cache.ts), so the failure cases ask about a topic
 * no other case searches for: on a topic already found, the cache would answer without asking PubMed.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { checkNumbers } from '../../checks/fact-check';
import { eventDataSchemas, type TurnEventType } from '../../contracts/event-data';
import { turnSchema, type Turn } from '../../contracts/turn';
import { defaultRules } from '../../dev/scripted-model/rules';
import { domainExpert } from '../../dev/scripted-model/rules/domain-expert';
import type { ScriptedRequest, ScriptedRule } from '../../dev/scripted-model/types';
import type { ScriptedWebPage } from '../../dev/scripted-model/web-tools';
import { startEutilsStandIn } from '../../dev/stand-ins/eutils';
import type { StandInServer } from '../../dev/stand-ins/http-knobs';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService } from '../support/service';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';

jest.setTimeout(180_000);

const NCBI_EMAIL = 'ops@amy.example';
/** How long one PubMed request may take here; the timeout case holds its answer back for longer. */
const NETWORK_TIMEOUT_MS = 2000;

/**
 * The scripted Domain Expert (dev/scripted-model/rules/domain-expert.ts), which a case can have add a sentence of its
 * own to its final answer, written from the request (the tool results are in its messages).
 */
let addSentence: ((req: ScriptedRequest<'domain_expert'>) => string) | null = null;
let sentencesAdded = 0;
const steerableDomainExpert: ScriptedRule<'domain_expert'> = {
  step: 'domain_expert',
  respond(req) {
    const response = domainExpert.respond(req);
    // The pages its web search found in this reply: the server tool's results, which never travel back in a request.
    for (const use of response.serverToolUse ?? []) {
      if (use.name === 'web_search' && 'results' in use.outcome) webPagesFound.push(...use.outcome.results);
    }
    if (addSentence === null || 'toolUse' in response) return response;
    sentencesAdded++;
    return { ...response, text: `${response.text} ${addSentence(req)}` };
  },
};
let webPagesFound: ScriptedWebPage[] = [];

let eutils: StandInServer;
let demo: DemoService;

beforeAll(async () => {
  eutils = await startEutilsStandIn();
  demo = await startDemoService({
    env: {
      AMY_DE_NETWORK_TOOLS: 'true',
      NCBI_EMAIL,
      NCBI_EUTILS_URL: `${eutils.url}/entrez/eutils`,
      AMY_DE_NETWORK_TIMEOUT_MS: String(NETWORK_TIMEOUT_MS),
      // The Messages API's web search and fetch, run by the scripted model over its invented web on example.org.
      AMY_DE_WEB_TOOLS: 'web_search,web_fetch',
      AMY_DE_WEB_DOMAINS: 'example.org',
    },
    scripted: { rules: [...defaultRules.filter((rule) => rule.step !== 'domain_expert'), steerableDomainExpert] },
  });
});
afterAll(async () => {
  await demo?.close();
  await eutils?.close();
});
beforeEach(() => {
  eutils.requests.length = 0;
  webPagesFound = [];
  demo.svc.scripted.requests.clear();
});
afterEach(() => {
  eutils.reset();
  addSentence = null;
  sentencesAdded = 0;
});

interface Asked {
  turn: Turn;
  events: ReceivedEvent[];
}

/** POST the question, follow the turn over SSE until the server closes the stream, then GET the turn. */
async function ask(content: string): Promise<Asked> {
  const { svc, user } = demo;
  const created = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }] },
  });
  expect(created.status).toBe(201);
  const stream = openEventStream(`${svc.url}/v1/turns/${created.body.id}/events`, { apiKey: user.apiKey });
  await stream.closedByServer;
  const fetched = await api(svc.url, 'GET', `/v1/turns/${created.body.id}`, { key: user.apiKey });
  return { turn: expectSchema(turnSchema, fetched.body), events: stream.events };
}

/** Ids from 1 without a gap, turn.started first, one terminal event last: turn.completed with the stored result. */
function expectCompletedGaplessStream({ turn, events }: Asked) {
  expect(turn.status).toBe('completed');
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) expectSchema(eventDataSchemas[e.type as TurnEventType], e.data);
  expect(events[0].type).toBe('turn.started');
  expect(events.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed')).toHaveLength(1);
  const last = events[events.length - 1];
  expect(last.type).toBe('turn.completed');
  expect((last.data.result as { answer: string }).answer).toBe(turn.result!.answer);
  expect(turn.result!.agents_used).toEqual(['domain_expert']);
}

/** What the E-utilities stand-in was asked for this turn, by utility. */
const eutilsRequests = (utility: 'esearch' | 'esummary') =>
  eutils.requests.filter((url) => url.pathname.endsWith(`/${utility}.fcgi`));

interface CitedArticle {
  pmid: string;
  title: string;
  journal: string;
  year: number | null;
  url: string;
}

type ToolResult = { name: string; isError: boolean; content: string };

/** The tool results in a conversation, each with the name of the tool that returned it. */
function toolResultsIn(messages: Anthropic.MessageParam[]): ToolResult[] {
  const names = new Map<string, string>();
  const results: ToolResult[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use') names.set(block.id, block.name);
      if (block.type === 'tool_result' && typeof block.content === 'string') {
        const name = names.get(block.tool_use_id) ?? '';
        results.push({ name, isError: block.is_error === true, content: block.content });
      }
    }
  }
  return results;
}

/** The articles pubmed_search returned in a conversation. */
const pubmedArticlesIn = (messages: Anthropic.MessageParam[]): CitedArticle[] =>
  toolResultsIn(messages)
    .filter((r) => r.name === 'pubmed_search' && !r.isError)
    .flatMap((r) => (JSON.parse(r.content) as { articles: CitedArticle[] }).articles);

/** The Domain Expert's conversation this turn, as the scripted model last received it. */
const expertConversation = () =>
  demo.svc.scripted.requests
    .entries()
    .filter((r) => r.step === 'domain_expert')
    .at(-1)?.messages ?? [];

/** The tool results the Domain Expert was sent this turn. */
const toolResults = () => toolResultsIn(expertConversation());

/** The articles pubmed_search returned to the Domain Expert this turn. */
const pubmedArticles = () => pubmedArticlesIn(expertConversation());

/** How the scripted Domain Expert cites an article: title without its closing period, journal, year, URL. */
const citation = (a: CitedArticle) => `"${a.title.replace(/\.$/, '')}" (${a.journal}, ${a.year}), ${a.url}.`;

/** Every URL in a text, a sentence's closing punctuation left off. */
const urlsIn = (text: string) =>
  (text.match(/https?:\/\/[^\s<>"\]]+/g) ?? []).map((url) => url.replace(/[.,;:!?)]+$/, ''));

/** Every URL of the answer was returned by a tool this turn. */
function expectOnlyToolUrls(answer: string) {
  const returned = [...toolResults().map((r) => r.content), ...webPagesFound.map((page) => page.url)].join('\n');
  for (const url of urlsIn(answer)) expect(returned).toContain(url);
}

describe('with network tools on, a knowledge question', () => {
  test('is answered citing an article PubMed returned for the topic, and the fact-check keeps the citation', async () => {
    const asked = await ask('What is heart rate variability?');
    expectCompletedGaplessStream(asked);

    // The worker searched the stand-in (the configured URL) for the topic alone, naming itself as NCBI asks.
    const searches = eutilsRequests('esearch');
    expect(searches.map((url) => url.searchParams.get('term'))).toEqual(['heart rate variability']);
    for (const url of [...searches, ...eutilsRequests('esummary')]) {
      expect(url.searchParams.get('db')).toBe('pubmed');
      expect(url.searchParams.get('email')).toBe(NCBI_EMAIL);
      expect(url.searchParams.get('tool')).toBe('amy-turn-service');
    }
    const summarised = eutilsRequests('esummary').flatMap((url) => url.searchParams.get('id')!.split(','));
    expect(summarised.length).toBeGreaterThan(0);

    // The article cited is the first the search returned, with its title, journal, year and PubMed URL.
    const articles = pubmedArticles();
    expect(articles.map((a) => a.pmid)).toEqual(summarised);
    const [first] = articles;
    expect(first.url).toBe(`https://pubmed.ncbi.nlm.nih.gov/${first.pmid}/`);
    const { answer, fact_check } = asked.turn.result!;
    expect(answer).toContain(`PubMed lists ${citation(first)}`);
    // The page its web search found is cited too, and named as its source.
    const [page] = webPagesFound;
    expect(page).toBeDefined();
    expect(answer).toContain(`([${page.title}](${page.url}))`);
    expectOnlyToolUrls(answer);

    // The year and the PMID are a citation, not numbers about the user: nothing flagged, nothing removed.
    expect(fact_check).toMatchObject({ issues: [], repairs: { resynthesised: false, removed: [] } });
  });

  test.each([
    ['PubMed answers 503', () => eutils.fail({ kind: 'server_error', status: 503 })],
    [
      'PubMed does not answer within the timeout',
      () => {
        eutils.knobs.delayMs = NETWORK_TIMEOUT_MS + 3000;
      },
    ],
  ])('still completes when %s, saying the literature could not be searched, citing nothing', async (_case, fail) => {
    fail();
    const asked = await ask('What is a normal resting heart rate?');
    expectCompletedGaplessStream(asked);

    // PubMed was asked, not a cache: the search failed at the outside service.
    expect(eutilsRequests('esearch').map((url) => url.searchParams.get('term'))).toEqual(['resting heart rate']);
    expect(eutilsRequests('esummary')).toEqual([]);
    expect(toolResults().filter((r) => r.name === 'pubmed_search')).toEqual([
      expect.objectContaining({ isError: true, content: expect.stringMatching(/^PubMed could not be reached/) }),
    ]);

    const { answer, fact_check } = asked.turn.result!;
    expect(answer).toMatch(/I could not search the published literature just now/);
    expect(answer).not.toContain('pubmed.ncbi.nlm.nih.gov');
    expectOnlyToolUrls(answer);
    expect(fact_check).toMatchObject({ issues: [], repairs: { removed: [] } });
  });

  test("keeps a citation whose title has numbers of its own: they are the article's, not the user's", async () => {
    const hasDigits = (a: CitedArticle) => /\d/.test(a.title);
    addSentence = (req) => {
      const numbered = pubmedArticlesIn(req.messages).find(hasDigits);
      return numbered ? `PubMed also lists ${citation(numbered)}` : 'PubMed returned no title with numbers.';
    };
    const asked = await ask('How many steps a day should adults take?');
    expectCompletedGaplessStream(asked);

    const numbered = pubmedArticles().find(hasDigits);
    expect(numbered).toBeDefined();
    const { answer, fact_check } = asked.turn.result!;
    expect(answer).toContain(`PubMed also lists ${citation(numbered!)}`);
    expectOnlyToolUrls(answer);
    expect(fact_check).toMatchObject({ issues: [], repairs: { resynthesised: false, removed: [] } });
    // The check did read the title's numbers as quantities, and traced them to the Domain Expert's own words.
    const read = checkNumbers(answer, { sheet: {}, userMessage: '' }).checked.map((token) => token.value);
    expect(read).toEqual(expect.arrayContaining(numbered!.title.match(/\d+/g)!.map(Number)));
    expect(fact_check!.numbers_checked).toBe(read.length);
  });

  test('never shows a URL the model invented, in the answer or the stream, and keeps the PubMed URL it found', async () => {
    const invented = 'https://invented.example.org/step-count-follow-up';
    addSentence = () => `A follow-up study is at ${invented}.`;
    const asked = await ask('How many steps a day should adults take?');
    expectCompletedGaplessStream(asked);

    const [first] = pubmedArticles();
    expect(first).toBeDefined();
    const { answer } = asked.turn.result!;
    expect(answer).toContain(first.url);
    expect(answer).not.toContain('invented.example.org');
    expectOnlyToolUrls(answer);
    // Not even for a moment: no event (the Domain Expert's streamed thoughts included) ever carried it.
    for (const e of asked.events) expect(e.rawData).not.toContain('invented.example.org');
    // The model did write it: the guard took it out.
    expect(sentencesAdded).toBeGreaterThan(0);
  });
});
