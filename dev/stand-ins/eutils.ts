/**
 * A stand-in for NCBI's E-utilities (ESearch and ESummary on db=pubmed, `retmode=json`), answering in
 * their published JSON over a small fixed corpus, for tests and `npm start` without network access.
 *
 * The articles are invented for the stand-in: realistic in shape and subject, but not real papers. Their
 * PMIDs start at 99000001, above any PubMed has issued, so none can be mistaken for a real citation.
 */
import { startStandIn, type StandInServer } from './http-knobs';

interface CorpusArticle {
  pmid: string;
  title: string;
  source: string;
  fulljournalname: string;
  pubdate: string;
  authors: string[];
  keywords: string[];
}

const EUTILS_STAND_IN_CORPUS: readonly CorpusArticle[] = [
  {
    pmid: '99000001',
    title: 'Heart rate variability and all-cause mortality in community-dwelling adults: a pooled cohort analysis.',
    source: 'Eur Heart J Stand-in',
    fulljournalname: 'European heart journal (stand-in)',
    pubdate: '2021 Mar 14',
    authors: ['Lindqvist A', 'Moreau C', 'Okafor N'],
    keywords: ['heart rate variability', 'hrv', 'mortality', 'cohort'],
  },
  {
    pmid: '99000002',
    title: 'Nightly heart rate variability from consumer wearables tracks training load in recreational runners.',
    source: 'J Sports Sci Stand-in',
    fulljournalname: 'Journal of sports sciences (stand-in)',
    pubdate: '2022 Sep',
    authors: ['Petersen L', 'Garcia R'],
    keywords: ['heart rate variability', 'hrv', 'wearable', 'training', 'exercise', 'sleep'],
  },
  {
    pmid: '99000003',
    title: 'Resting heart rate and incident cardiovascular disease: a dose-response meta-analysis.',
    source: 'Heart Stand-in',
    fulljournalname: 'Heart (British Cardiac Society) (stand-in)',
    pubdate: '2020 Jan 8',
    authors: ['Zhang W', 'Haddad S', 'Kowalski P'],
    keywords: ['resting heart rate', 'cardiovascular disease', 'meta-analysis'],
  },
  {
    pmid: '99000004',
    title: 'Aerobic exercise training lowers resting heart rate: a systematic review of randomised trials.',
    source: 'Br J Sports Med Stand-in',
    fulljournalname: 'British journal of sports medicine (stand-in)',
    pubdate: '2019 Nov',
    authors: ['Nakamura K', 'Svensson E'],
    keywords: ['resting heart rate', 'exercise', 'aerobic', 'randomised trial', 'steps'],
  },
  {
    pmid: '99000005',
    title: 'LDL cholesterol lowering and major vascular events: an individual participant data meta-analysis.',
    source: 'Lancet Stand-in',
    fulljournalname: 'Lancet (London, England) (stand-in)',
    pubdate: '2018 Oct 27',
    authors: ['Baird J', 'Osei K', 'Romano F'],
    keywords: ['ldl', 'ldl cholesterol', 'ldl-c', 'statin', 'cardiovascular disease'],
  },
  {
    pmid: '99000006',
    title: 'Dietary saturated fat replacement and plasma LDL cholesterol in adults: a randomised crossover trial.',
    source: 'Am J Clin Nutr Stand-in',
    fulljournalname: 'The American journal of clinical nutrition (stand-in)',
    pubdate: '2023 Feb',
    authors: ['Ferreira M', 'Quinn D'],
    keywords: ['ldl', 'ldl cholesterol', 'diet', 'saturated fat', 'randomised trial'],
  },
  {
    pmid: '99000007',
    title: 'Sleep duration and next-day resting heart rate and heart rate variability measured by wrist-worn devices.',
    source: 'Sleep Stand-in',
    fulljournalname: 'Sleep (stand-in)',
    pubdate: '2022 Jun 1',
    authors: ['Adeyemi T', 'Holm J', 'Brandt S'],
    keywords: ['sleep', 'sleep duration', 'resting heart rate', 'heart rate variability', 'hrv', 'wearable'],
  },
  {
    pmid: '99000008',
    title: 'Short sleep and LDL cholesterol: a Mendelian randomisation study.',
    source: 'Sleep Med Stand-in',
    fulljournalname: 'Sleep medicine (stand-in)',
    pubdate: '2024 Apr',
    authors: ['Ito H', 'Mensah A'],
    keywords: ['sleep', 'sleep duration', 'ldl', 'ldl cholesterol', 'mendelian randomisation'],
  },
  {
    pmid: '99000009',
    title: 'Deep sleep proportion and cognitive performance in older adults: a prospective study.',
    source: 'J Sleep Res Stand-in',
    fulljournalname: 'Journal of sleep research (stand-in)',
    pubdate: '2021 Dec',
    authors: ['Olsen B', 'Castillo M'],
    keywords: ['sleep', 'deep sleep', 'slow wave sleep', 'cognition'],
  },
  {
    pmid: '99000010',
    title: 'Daily step count and mortality among adults: a meta-analysis of 15 international cohorts.',
    source: 'Lancet Public Health Stand-in',
    fulljournalname: 'The Lancet. Public health (stand-in)',
    pubdate: '2022 Mar',
    authors: ['Duarte P', 'Weiss R', 'Cho Y'],
    keywords: ['steps', 'step count', 'physical activity', 'mortality', 'cohort'],
  },
];

/** Every word of the term (its boolean operators aside) in the title or a keyword, as ESearch ANDs terms. */
function matches(article: CorpusArticle, term: string): boolean {
  const haystack = `${article.title} ${article.keywords.join(' ')}`.toLowerCase();
  const words = term
    .toLowerCase()
    .split(/[^a-z0-9-]+/)
    .filter((w) => w !== '' && w !== 'and' && w !== 'or');
  return words.length > 0 && words.every((w) => haystack.includes(w));
}

function esearch(url: URL) {
  const term = url.searchParams.get('term') ?? '';
  const retmax = Number(url.searchParams.get('retmax') ?? '20');
  const found = EUTILS_STAND_IN_CORPUS.filter((a) => matches(a, term));
  return {
    status: 200,
    body: {
      header: { type: 'esearch', version: '0.3' },
      esearchresult: {
        count: String(found.length),
        retmax: String(Math.min(retmax, found.length)),
        retstart: '0',
        idlist: found.slice(0, retmax).map((a) => a.pmid),
        translationset: [],
        querytranslation: term,
      },
    },
  };
}

function esummary(url: URL) {
  const uids = (url.searchParams.get('id') ?? '').split(',').filter((id) => id !== '');
  const result: Record<string, unknown> = { uids };
  for (const uid of uids) {
    const article = EUTILS_STAND_IN_CORPUS.find((a) => a.pmid === uid);
    result[uid] = article
      ? {
          uid,
          pubdate: article.pubdate,
          epubdate: '',
          source: article.source,
          authors: article.authors.map((name) => ({ name, authtype: 'Author', clusterid: '' })),
          lastauthor: article.authors[article.authors.length - 1],
          title: article.title,
          sorttitle: article.title.toLowerCase(),
          lang: ['eng'],
          pubtype: ['Journal Article'],
          articleids: [{ idtype: 'pubmed', idtypen: 1, value: uid }],
          fulljournalname: article.fulljournalname,
          sortpubdate: article.pubdate,
        }
      : { uid, error: 'cannot get document summary' };
  }
  return { status: 200, body: { header: { type: 'esummary', version: '0.3' }, result } };
}

/** Answers `GET <url>/esearch.fcgi` and `GET <url>/esummary.fcgi`; the client's base URL is `url`. */
export function startEutilsStandIn(options: { port?: number; host?: string } = {}): Promise<StandInServer> {
  return startStandIn((url) => {
    if (url.searchParams.get('db') !== 'pubmed') return { status: 400, body: { error: 'Invalid db name specified' } };
    if (url.pathname.endsWith('/esearch.fcgi')) return esearch(url);
    if (url.pathname.endsWith('/esummary.fcgi')) return esummary(url);
    return { status: 404, body: { error: 'not found' } };
  }, options);
}
