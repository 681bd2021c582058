/**
 * Web search and web fetch as the Messages API runs them, for the scripted model: a request that offers the server
 * tools (`web_search_20250305`, `web_fetch_20250910`) gets a `ScriptedWeb` that searches and fetches a small
 * invented web (every page on example.org, which no one owns, so none can be mistaken for a real source), within the
 * tool's `allowed_domains` and `max_uses`. Results and errors have the API's shapes (the SDK's WebSearchResultBlock,
 * BetaWebFetchBlock, their error codes); ./message-response.ts lays them out as the API's blocks.
 */

export interface ScriptedWebPage {
  url: string;
  title: string;
  /** The page's text: what a fetch returns, and what a citation quotes (its first sentence). No digits in it. */
  text: string;
  /** How old the page is, as search results give it. */
  pageAge: string;
  /** Words a search for it matches. */
  keywords: readonly string[];
}

const PAGES: readonly ScriptedWebPage[] = [
  {
    url: 'https://heart-reference.example.org/hrv-explained',
    title: 'Heart rate variability explained',
    text:
      'Heart rate variability is the variation in time between heartbeats, and higher values at rest usually go with good recovery. ' +
      'It falls with age and varies widely between people, so a person is best compared with their own baseline.',
    pageAge: 'March 4, 2025',
    keywords: ['heart', 'rate', 'variability', 'hrv', 'recovery'],
  },
  {
    url: 'https://heart-reference.example.org/resting-heart-rate',
    title: 'Resting heart rate: what it tells you',
    text:
      'A lower resting heart rate generally reflects better cardiovascular fitness. ' +
      'Sleep, stress, illness and some medicines raise it for a while.',
    pageAge: 'January 12, 2025',
    keywords: ['resting', 'heart', 'rate', 'pulse', 'fitness'],
  },
  {
    url: 'https://lipids.example.org/ldl-cholesterol',
    title: 'LDL cholesterol and heart health',
    text:
      'LDL cholesterol carries cholesterol to the arteries, and lower levels go with a lower risk of heart disease. ' +
      'Diet, activity and medicines can all lower it.',
    pageAge: 'June 30, 2024',
    keywords: ['ldl', 'cholesterol', 'lipids', 'heart'],
  },
  {
    url: 'https://sleep-reference.example.org/sleep-duration',
    title: 'How much sleep adults need',
    text:
      'Most adults need seven or more hours of sleep a night, and regular sleep times help as much as the total. ' +
      'Too little sleep over weeks affects mood, weight and blood pressure.',
    pageAge: 'September 8, 2025',
    keywords: ['sleep', 'duration', 'rest', 'insomnia'],
  },
  {
    url: 'https://activity-reference.example.org/steps',
    title: 'Walking, steps and health',
    text:
      'Walking more each day is linked with a lower risk of early death, and the benefit grows gradually before it levels off. ' +
      'Brisk walking counts as moderate activity.',
    pageAge: 'May 19, 2025',
    keywords: ['steps', 'walking', 'activity', 'exercise', 'active'],
  },
];

/** The server tools a request offers, as its `tools` array declares them. */
export interface ServerToolSpec {
  type: 'web_search_20250305' | 'web_fetch_20250910';
  name: 'web_search' | 'web_fetch';
  max_uses?: number;
  allowed_domains?: string[];
  blocked_domains?: string[];
}

export type WebSearchOutcome = { results: ScriptedWebPage[] } | { error_code: string };
export type WebFetchOutcome = { page: ScriptedWebPage; retrievedAt: string } | { error_code: string };

/** What a rule can ask of the web during its reply; each call counts against the tool's `max_uses`. */
export interface ScriptedWeb {
  search: ((query: string) => WebSearchOutcome) | null;
  fetch: ((url: string) => WebFetchOutcome) | null;
}

/** A request that offers no server tool. */
export const NO_WEB: ScriptedWeb = { search: null, fetch: null };

const MAX_RESULTS = 3;
/** A fetched page's time, fixed so that a rule's answer is deterministic in its request. */
const RETRIEVED_AT = '2026-01-01T00:00:00Z';

/** `example.org` allows `heart-reference.example.org`: a domain covers its subdomains, as the API's do. */
const withinDomain = (url: string, domain: string) => {
  const host = new URL(url).hostname;
  return host === domain || host.endsWith(`.${domain}`);
};

function permitted(url: string, spec: ServerToolSpec): boolean {
  if (spec.allowed_domains && !spec.allowed_domains.some((d) => withinDomain(url, d))) return false;
  return !(spec.blocked_domains ?? []).some((d) => withinDomain(url, d));
}

const words = (text: string) => text.toLowerCase().match(/[a-z]+/g) ?? [];

/** Pages ranked by how many of the query's words they list as keywords; none that matches no word. */
function searchPages(query: string, spec: ServerToolSpec): ScriptedWebPage[] {
  const asked = new Set(words(query));
  return PAGES.filter((page) => permitted(page.url, spec))
    .map((page) => ({ page, score: page.keywords.filter((k) => asked.has(k)).length }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_RESULTS)
    .map(({ page }) => page);
}

/**
 * The web for one reply. `failing`: the tools answer `unavailable`, as the API's do when its search provider is down
 * (the scripted model's `web_tools_unavailable` fault).
 */
export function scriptedWeb(tools: readonly ServerToolSpec[], failing: boolean): ScriptedWeb {
  const budgeted = <Outcome>(spec: ServerToolSpec | undefined, run: (arg: string) => Outcome) => {
    if (!spec) return null;
    let uses = 0;
    return (arg: string): Outcome | { error_code: string } => {
      uses++;
      if (spec.max_uses !== undefined && uses > spec.max_uses) return { error_code: 'max_uses_exceeded' };
      return failing ? { error_code: 'unavailable' } : run(arg);
    };
  };
  const searchSpec = tools.find((t) => t.type === 'web_search_20250305');
  const fetchSpec = tools.find((t) => t.type === 'web_fetch_20250910');
  return {
    search: budgeted(searchSpec, (query) => ({ results: searchPages(query, searchSpec!) })),
    fetch: budgeted(fetchSpec, (url): WebFetchOutcome => {
      const page = PAGES.find((p) => p.url === url);
      if (!permitted(url, fetchSpec!)) return { error_code: 'url_not_allowed' };
      return page ? { page, retrievedAt: RETRIEVED_AT } : { error_code: 'url_not_accessible' };
    }),
  };
}

/** The first sentence of a page: what a citation of it quotes. */
export const firstSentence = (page: ScriptedWebPage) => /^[^.]*\./.exec(page.text)?.[0] ?? page.text;
