/**
 * PubMed through NCBI's E-utilities (https://www.ncbi.nlm.nih.gov/books/NBK25499/): ESearch finds the
 * PMIDs most relevant to a topic, ESummary gives each one's title, journal and date. Both in JSON
 * (`retmode=json`), both naming this service (`tool`, `email`) as NCBI asks of every E-utilities client,
 * with the API key when there is one (it raises the limit from 3 to 10 requests a second).
 *
 * The topic must already have passed checks/outgoing-query-guard.ts: this module sends what it is given.
 */
import { z } from 'zod';
import type { ToolResultCache } from './cache';
import { toolCacheKey } from './cache';
import { ToolMalformedResponseError, ToolRequestRefusedError } from './errors';
import { getOutsideJson, outsideService, type OutsideServiceOptions } from './outside-request';
import { ncbiRequestIntervalMs } from './rate-limit';

export const PUBMED_DEFAULT_BASE_URL = 'https://eutils.ncbi.nlm.nih.gov/entrez/eutils';
/** The most articles one search returns: enough to cite, few enough for a tool result. */
export const PUBMED_MAX_ARTICLES = 20;
const DEFAULT_CACHE_TTL_MS = 24 * 60 * 60 * 1000;

interface PubMedArticle {
  pmid: string;
  title: string;
  journal: string;
  /** The publication year, or null when PubMed's date has none. */
  year: number | null;
  url: string;
}

interface PubMedSearchResult {
  articles: PubMedArticle[];
}

export interface PubMedClient {
  /** The articles most relevant to `topic`, most relevant first, at most `max`. */
  search(topic: string, options: { max: number }): Promise<PubMedSearchResult>;
}

export interface PubMedClientOptions extends OutsideServiceOptions {
  /** Registered with NCBI as the `tool` and `email` parameters, so NCBI can reach us before blocking us. */
  tool: string;
  email: string;
  apiKey?: string;
  cache: ToolResultCache;
  cacheTtlMs?: number;
}

const PMID = z.string().regex(/^\d{1,9}$/);

/** ESearch's JSON: `esearchresult.idlist` (an `ERROR` there instead when the term is unusable). */
const esearchResponse = z.object({
  esearchresult: z.union([z.object({ idlist: z.array(PMID) }), z.object({ ERROR: z.string() })]),
});

/** One ESummary document (only the fields read here); a PMID PubMed cannot summarise has `error`. */
const esummaryDocument = z.union([
  z.object({
    uid: PMID,
    title: z.string(),
    fulljournalname: z.string().optional(),
    source: z.string().optional(),
    pubdate: z.string().optional(),
    sortpubdate: z.string().optional(),
  }),
  z.object({ uid: PMID, error: z.string() }),
]);

/** ESummary's JSON: `result.uids` lists the documents, each under its uid. */
const esummaryResponse = z.object({
  result: z.object({ uids: z.array(PMID) }).catchall(z.unknown()),
});

/** "2021 Jan 15", "2019 Spring", "2020 Nov-Dec": the year is the first four digits. */
function publicationYear(...dates: Array<string | undefined>): number | null {
  for (const date of dates) {
    const year = /\b(1[89]\d\d|2\d\d\d)\b/.exec(date ?? '');
    if (year) return Number(year[1]);
  }
  return null;
}

const pubmedArticleUrl = (pmid: string) => `https://pubmed.ncbi.nlm.nih.gov/${pmid}/`;

export function createPubMedClient(options: PubMedClientOptions): PubMedClient {
  const { base, host, deps } = outsideService(options);
  const intervalMs = ncbiRequestIntervalMs(options.apiKey !== undefined && options.apiKey !== '');
  const malformed = (what: string) => new ToolMalformedResponseError('PubMed', host, what);

  const eutilsUrl = (utility: 'esearch' | 'esummary', params: Record<string, string>) => {
    const url = new URL(`${base}/${utility}.fcgi`);
    for (const [name, value] of Object.entries({ db: 'pubmed', ...params, retmode: 'json' })) {
      url.searchParams.set(name, value);
    }
    url.searchParams.set('tool', options.tool);
    url.searchParams.set('email', options.email);
    if (options.apiKey) url.searchParams.set('api_key', options.apiKey);
    return url;
  };

  async function searchPmids(topic: string, max: number): Promise<string[]> {
    const body = await getOutsideJson(deps, {
      service: 'PubMed',
      url: eutilsUrl('esearch', { term: topic, retmax: String(max), sort: 'relevance' }),
      intervalMs,
    });
    const parsed = esearchResponse.safeParse(body);
    if (!parsed.success) throw malformed('ESearch without esearchresult.idlist');
    const result = parsed.data.esearchresult;
    // NCBI's own message can quote the term, so it is not passed on.
    if ('ERROR' in result) throw new ToolRequestRefusedError('PubMed', host, 200, 'ESearch could not use the term');
    return result.idlist.slice(0, max);
  }

  async function summarise(pmids: string[]): Promise<PubMedArticle[]> {
    const body = await getOutsideJson(deps, {
      service: 'PubMed',
      url: eutilsUrl('esummary', { id: pmids.join(',') }),
      intervalMs,
    });
    const parsed = esummaryResponse.safeParse(body);
    if (!parsed.success) throw malformed('ESummary without result.uids');
    const byUid = parsed.data.result as Record<string, unknown>;
    const articles: PubMedArticle[] = [];
    // ESearch's order is relevance; ESummary's uids are not promised to keep it.
    for (const pmid of pmids) {
      if (!parsed.data.result.uids.includes(pmid)) continue;
      const doc = esummaryDocument.safeParse(byUid[pmid]);
      if (!doc.success) throw malformed(`ESummary document without a title`);
      if ('error' in doc.data) continue;
      const { title, fulljournalname, source, pubdate, sortpubdate } = doc.data;
      articles.push({
        pmid,
        title: title.trim(),
        journal: (fulljournalname || source || '').trim(),
        year: publicationYear(pubdate, sortpubdate),
        url: pubmedArticleUrl(pmid),
      });
    }
    return articles;
  }

  return {
    async search(topic, { max }) {
      const term = topic.replace(/\s+/g, ' ').trim();
      if (term === '') throw new ToolRequestRefusedError('PubMed', host, null, 'the topic is empty');
      const count = Math.min(Math.max(1, Math.floor(max)), PUBMED_MAX_ARTICLES);
      const key = toolCacheKey('pubmed.search', { term, max: count });
      const cached = (await options.cache.get(key)) as PubMedSearchResult | undefined;
      if (cached !== undefined) return cached;
      const pmids = await searchPmids(term, count);
      const result: PubMedSearchResult = { articles: pmids.length === 0 ? [] : await summarise(pmids) };
      await options.cache.set(key, result, options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS);
      return result;
    },
  };
}
