/**
 * platform/literature/pubmed.ts against the E-utilities stand-in (dev/stand-ins/eutils.ts), which answers
 * in NCBI's JSON: ESearch then ESummary with NCBI's required parameters, articles in relevance order, and
 * each failure as its typed error whose message never holds the topic.
 */
import { createMemoryToolResultCache } from '../../platform/literature/cache';
import { createCircuitBreaker } from '../../platform/literature/circuit';
import {
  CircuitOpenError,
  NetworkToolError,
  ToolMalformedResponseError,
  ToolRateLimitedError,
  ToolTimeoutError,
  ToolUnavailableError,
} from '../../platform/literature/errors';
import { createPubMedClient } from '../../platform/literature/pubmed';
import { createMemoryRateLimiter } from '../../platform/literature/rate-limit';
import { startEutilsStandIn } from '../../dev/stand-ins/eutils';
import type { StandInServer } from '../../dev/stand-ins/http-knobs';

let eutils: StandInServer;
beforeAll(async () => {
  eutils = await startEutilsStandIn();
});
afterAll(() => eutils.close());
beforeEach(() => {
  eutils.reset();
  eutils.requests.length = 0;
});

const noWait = { sleep: () => Promise.resolve() };

function client(overrides: Partial<Parameters<typeof createPubMedClient>[0]> = {}) {
  return createPubMedClient({
    baseUrl: `${eutils.url}/entrez/eutils`,
    tool: 'amy-turn-service',
    email: 'ops@amy.example',
    limiter: createMemoryRateLimiter(noWait),
    cache: createMemoryToolResultCache(),
    timeoutMs: 2000,
    ...overrides,
  });
}

const TOPIC = 'heart rate variability sleep';

test('ESearch then ESummary, with tool, email, api_key and retmode=json; articles in ESearch order', async () => {
  const result = await client({ apiKey: 'ncbi-key' }).search(TOPIC, { max: 5 });
  expect(result.articles).toEqual([
    {
      pmid: '99000002',
      title: 'Nightly heart rate variability from consumer wearables tracks training load in recreational runners.',
      journal: 'Journal of sports sciences (stand-in)',
      year: 2022,
      url: 'https://pubmed.ncbi.nlm.nih.gov/99000002/',
    },
    {
      pmid: '99000007',
      title:
        'Sleep duration and next-day resting heart rate and heart rate variability measured by wrist-worn devices.',
      journal: 'Sleep (stand-in)',
      year: 2022,
      url: 'https://pubmed.ncbi.nlm.nih.gov/99000007/',
    },
  ]);
  const [search, summary] = eutils.requests;
  expect(search.pathname).toBe('/entrez/eutils/esearch.fcgi');
  expect(Object.fromEntries(search.searchParams)).toEqual({
    db: 'pubmed',
    term: TOPIC,
    retmax: '5',
    sort: 'relevance',
    retmode: 'json',
    tool: 'amy-turn-service',
    email: 'ops@amy.example',
    api_key: 'ncbi-key',
  });
  expect(summary.pathname).toBe('/entrez/eutils/esummary.fcgi');
  expect(summary.searchParams.get('id')).toBe('99000002,99000007');
  expect(summary.searchParams.get('retmode')).toBe('json');
  expect(summary.searchParams.get('tool')).toBe('amy-turn-service');
  expect(summary.searchParams.get('email')).toBe('ops@amy.example');
});

test('without a key no api_key is sent and requests are spaced for 3 a second', async () => {
  const waits: number[] = [];
  const limiter = createMemoryRateLimiter({
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    now: () => 0,
  });
  await client({ limiter }).search('ldl cholesterol', { max: 3 });
  expect(eutils.requests.every((r) => !r.searchParams.has('api_key'))).toBe(true);
  expect(waits).toEqual([334]);
});

test('no match is an empty list after ESearch alone; a second identical search comes from the cache', async () => {
  const pubmed = client();
  expect(await pubmed.search('quantum entanglement', { max: 5 })).toEqual({ articles: [] });
  expect(eutils.requests).toHaveLength(1);
  const first = await pubmed.search('LDL cholesterol', { max: 2 });
  expect(first.articles.map((a) => a.pmid)).toEqual(['99000005', '99000006']);
  expect(await pubmed.search('  ldl   CHOLESTEROL ', { max: 2 })).toEqual(first);
  expect(eutils.requests).toHaveLength(3);
});

test('a PMID ESummary cannot summarise is left out; a document without a title is malformed', async () => {
  const fetchWith = (summary: unknown): typeof fetch =>
    jest.fn(async (url: string | URL | Request) =>
      String(url).includes('esearch')
        ? Response.json({ esearchresult: { idlist: ['1', '2'] } })
        : Response.json(summary),
    ) as unknown as typeof fetch;
  const good = {
    result: {
      uids: ['1', '2'],
      1: { uid: '1', error: 'cannot get document summary' },
      2: { uid: '2', title: 'T.', source: 'J', pubdate: '2019 Spring' },
    },
  };
  expect((await client({ fetch: fetchWith(good) }).search('x y', { max: 2 })).articles).toEqual([
    { pmid: '2', title: 'T.', journal: 'J', year: 2019, url: 'https://pubmed.ncbi.nlm.nih.gov/2/' },
  ]);
  const bad = { result: { uids: ['1'], 1: { uid: '1', source: 'J' } } };
  await expect(client({ fetch: fetchWith(bad) }).search('x y', { max: 2 })).rejects.toBeInstanceOf(
    ToolMalformedResponseError,
  );
});

async function failure(promise: Promise<unknown>): Promise<NetworkToolError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(NetworkToolError);
  const toolError = error as NetworkToolError;
  expect(toolError.message).not.toMatch(/variability|ncbi-key|esearch|term=/i);
  return toolError;
}

test('429 with Retry-After, 500, malformed JSON and a slow answer each fail as their typed error', async () => {
  eutils.fail({ kind: 'rate_limited', retryAfterSeconds: 7 });
  const limited = await failure(client({ apiKey: 'ncbi-key' }).search(TOPIC, { max: 5 }));
  expect(limited).toBeInstanceOf(ToolRateLimitedError);
  expect((limited as ToolRateLimitedError).retryAfterMs).toBe(7000);

  eutils.fail({ kind: 'server_error' });
  const down = await failure(client().search(TOPIC, { max: 5 }));
  expect(down).toBeInstanceOf(ToolUnavailableError);
  expect((down as ToolUnavailableError).status).toBe(500);

  eutils.fail({ kind: 'malformed' });
  expect(await failure(client().search(TOPIC, { max: 5 }))).toBeInstanceOf(ToolMalformedResponseError);

  eutils.reset();
  eutils.knobs.delayMs = 500;
  expect(await failure(client({ timeoutMs: 100 }).search(TOPIC, { max: 5 }))).toBeInstanceOf(ToolTimeoutError);
});

test('repeated 503s open the circuit; while it is open nothing is sent', async () => {
  const circuit = createCircuitBreaker({ failureThreshold: 2, coolDownMs: 60_000 });
  const pubmed = client({ circuit });
  eutils.fail({ kind: 'server_error', status: 503 });
  await failure(pubmed.search(TOPIC, { max: 5 }));
  await failure(pubmed.search(TOPIC, { max: 5 }));
  const before = eutils.requests.length;
  expect(await failure(pubmed.search(TOPIC, { max: 5 }))).toBeInstanceOf(CircuitOpenError);
  expect(eutils.requests).toHaveLength(before);
});
