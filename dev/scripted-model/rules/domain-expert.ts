import type Anthropic from '@anthropic-ai/sdk';
import type { ScriptedRequest, ScriptedResponse, ScriptedRule, ScriptedServerToolUse, ScriptedToolUse } from '../types';
import { firstSentence } from '../web-tools';
import { mentionedMetrics, type MetricMention } from '../language/metrics';
import { normaliseMessage } from '../language/understand-question';

/** The first daily metric a question names, as its column ("my resting heart rate" → resting_heart_rate). */
const firstDailyMetric = (question: string) =>
  mentionedMetrics(normaliseMessage(question)).find((m: MetricMention) => m.source === 'daily')?.feature;

/**
 * The Domain Expert: a two-round tool user. First it asks for the user's profile, for the
 * reference range of each biomarker the question gives a value for, and for the literature priors on
 * what the question is about. Then it answers only from what the tools returned (the tool results in
 * the conversation): where the value sits, the range's numbers and the guideline's URL (and the user's
 * latest lab value for it, when on file); or, for a general question, a literature prior. As main agent
 * with supporting insights it leaves the user's own numbers to them and refers to them in one sentence
 * with no number in it. "Am I getting enough exercise?" is one such judgement: Data Science supports it with
 * the mean of active_zone_minutes, and the rule reads that level against the WHO activity guideline.
 */

/**
 * The user's activity judged against the guideline: its measures named ("active zone minutes", "physical
 * activity", MVPA), or enough of it asked about ("am I getting enough exercise", "am I active enough", "do
 * I work out enough"). Not a bare "exercise" ("does exercise help sleep?" stays a literature question).
 */
const ACTIVITY_WORDS = new RegExp(
  [
    String.raw`\bactive zone minutes?\b|\bazm\b|\bmvpa\b|\bmoderate[- ]to[- ]vigorous\b`,
    String.raw`\bphysical(?:ly)? activ(?:e|ity)\b|\bsufficiently active\b`,
    String.raw`\b(?:enough|sufficient) (?:\w+ ){0,2}(?:exercise|exercising|activity|movement)\b`,
    String.raw`\b(?:enough|sufficient) (?:\w+ ){0,2}(?:workouts?|training|cardio)\b`,
    String.raw`\b(?:active|exercise|exercising|work(?:ing)? ?out|train(?:ing)?|mov(?:e|ing)) (?:\w+ ){0,2}enough\b`,
  ].join('|'),
);

/** Biomarker names as people write them, and the name the rule passes to range_compare. */
const BIOMARKER_WORDS: Array<[RegExp, string]> = [
  [/\bldl(?:[- ]?c)?(?: cholesterol)?\b/, 'ldl'],
  [/\bhdl(?:[- ]?c)?(?: cholesterol)?\b/, 'hdl'],
  [/\b(?:total )?cholesterol\b/, 'total_cholesterol'],
  [/\btriglycerides?\b/, 'triglycerides'],
  [/\b(?:hb)?a1c\b/, 'hba1c'],
  [/\b(?:fasting )?(?:blood |plasma )?glucose\b|\bblood sugar\b/, 'fasting_glucose'],
  [/\bsystolic\b/, 'systolic'],
  [/\bdiastolic\b/, 'diastolic'],
  [/\btsh\b/, 'tsh'],
  [/\bvitamin d\b/, 'vitamin_d'],
  [/\bferritin\b/, 'ferritin'],
  [/\b(?:hs-?)?crp\b/, 'hs_crp'],
  [/\bresting heart rate\b|\brhr\b|\bresting hr\b/, 'resting_heart_rate'],
  // The physical-activity guideline (minutes a day of moderate-to-vigorous activity): named, or asked about
  // as enough exercise / activity, the phrasings language/cues.ts reads as ENOUGH_ACTIVITY.
  [ACTIVITY_WORDS, 'active_zone_minutes'],
];

/**
 * The number a biomarker is given right after its name: "an LDL of 124", "HbA1c is 5.9%" — but not a
 * length of time ("my resting heart rate over the last 90 days").
 */
const VALUE_AFTER =
  /^[^\d.?!]{0,25}?(\d+(?:\.\d+)?)(?![\d.])(?!\s*(?:days?|weeks?|months?|years?|nights?|hours?|minutes?)\b)/;
const BLOOD_PRESSURE = /\b(?:blood pressure|bp)\b[^\d.?!]{0,25}?(\d{2,3})\s*\/\s*(\d{2,3})\b/;

interface NamedValue {
  biomarker: string;
  value?: number;
}

/** Biomarkers in the order they are mentioned, each with the value given for it, if any. */
function mentionedBiomarkers(question: string): NamedValue[] {
  let rest = question.toLowerCase();
  const found: Array<NamedValue & { at: number }> = [];
  const bp = BLOOD_PRESSURE.exec(rest);
  if (bp) {
    found.push({ at: bp.index, biomarker: 'systolic', value: Number(bp[1]) });
    found.push({ at: bp.index + 1, biomarker: 'diastolic', value: Number(bp[2]) });
    rest = rest.slice(0, bp.index) + ' '.repeat(bp[0].length) + rest.slice(bp.index + bp[0].length);
  }
  for (const [pattern, biomarker] of BIOMARKER_WORDS) {
    const match = pattern.exec(rest);
    if (!match) continue;
    const after = VALUE_AFTER.exec(rest.slice(match.index + match[0].length));
    found.push({ at: match.index, biomarker, ...(after ? { value: Number(after[1]) } : {}) });
    // Blank the phrase out so "LDL cholesterol" is not also read as total cholesterol.
    rest = rest.slice(0, match.index) + ' '.repeat(match[0].length) + rest.slice(match.index + match[0].length);
  }
  return found.sort((a, b) => a.at - b.at).map(({ biomarker, value }) => ({ biomarker, value }));
}

interface ToolExchange {
  name: string;
  input: Record<string, unknown>;
  isError: boolean;
  result: unknown;
}

function resultText(content: Anthropic.ToolResultBlockParam['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
}

/** Every tool call in the conversation with its result, parsed as JSON where it is JSON. */
function toolExchanges(messages: Anthropic.MessageParam[]): ToolExchange[] {
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  const exchanges: ToolExchange[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use')
        calls.set(block.id, { name: block.name, input: block.input as Record<string, unknown> });
      if (block.type !== 'tool_result') continue;
      const call = calls.get(block.tool_use_id);
      if (!call) continue;
      const text = resultText(block.content);
      let result: unknown = text;
      try {
        result = JSON.parse(text);
      } catch {
        // An error result is a sentence, not JSON.
      }
      exchanges.push({ ...call, isError: block.is_error === true, result });
    }
  }
  return exchanges;
}

interface Source {
  citation: string;
  url?: string;
  year: number;
}

interface Classification {
  sex: string | null;
  applies_to: string;
  position: 'below' | 'within' | 'borderline' | 'above';
  band: string;
  band_range: string;
  scale: Array<{ band: string; range: string; position: string }>;
}

interface RangeComparison {
  biomarker: string;
  name: string;
  value: number;
  unit: string;
  classifications: Classification[];
  source: Source;
}

interface Prior {
  feature: string;
  summary: string;
  source: Source;
}

interface Profile {
  profile: { sex: string } | null;
  latest_biomarkers: Array<{ name: string; value: number; unit: string; taken_on: string }>;
}

const okResults = <T>(exchanges: ToolExchange[], name: string) =>
  exchanges.filter((e) => e.name === name && !e.isError && typeof e.result === 'object').map((e) => e.result as T);

const POSITION_WORDS: Record<Classification['position'], string> = {
  below: 'below the reference range',
  within: 'within the reference range',
  borderline: 'borderline',
  above: 'above the reference range',
};

/** "National Cholesterol Education Program (NCEP) Expert Panel (2002)": the citation's first sentence. */
const shortCitation = (source: Source) => `${source.citation.split('. ')[0]} (${source.year})`;

/** `Systolic blood pressure` mid-sentence is `systolic blood pressure`; `LDL` and `HbA1c` keep their capitals. */
const inProse = (name: string) => (/^[A-Z][a-z]+\b/.test(name) ? name[0].toLowerCase() + name.slice(1) : name);

function rangeSentences(
  comparison: RangeComparison,
  sex: string | undefined,
  profile: Profile | undefined,
  supported: boolean,
  fromAnalysis: boolean,
): string {
  const { value, unit } = comparison;
  const name = inProse(comparison.name);
  const chosen =
    comparison.classifications.find((c) => c.sex !== null && c.sex === sex) ?? comparison.classifications[0];
  const desirable = chosen.scale.filter((b) => b.position === 'within').map((b) => `${b.range} is ${b.band}`);
  const labs = profile?.latest_biomarkers ?? [];
  const labName = LAB_NAME[comparison.biomarker] ?? comparison.biomarker;
  // The value compared is the user's own lab result (looked up in the second round), not one they quoted.
  const compared = labs.find((b) => b.name === labName && b.value === value);
  // The level the supporting analysis computed is theirs to report: judged here, never restated.
  const reading = fromAnalysis
    ? `Your ${name} from the analysis above`
    : compared
      ? `Your latest ${name} on file, ${value} ${unit} (${compared.taken_on}),`
      : `A reading of ${value} ${unit} for ${name}`;
  const sentences = [
    `${reading} is ${POSITION_WORDS[chosen.position]}: it falls in the "${chosen.band}" band ` +
      `(${chosen.band_range}) for ${chosen.applies_to}` +
      (desirable.length > 0 ? `, where ${desirable.join(' and ')}.` : '.'),
  ];
  // With supporting insights the user's own numbers are the Data Science agent's to report.
  const onFile = supported || compared ? undefined : labs.find((b) => b.name === labName);
  if (onFile && onFile.value !== value) {
    sentences.push(`Your latest ${name} on file is ${onFile.value} ${onFile.unit} (${onFile.taken_on}).`);
  }
  const url = comparison.source.url ? `, ${comparison.source.url}` : '';
  sentences.push(`Source: ${shortCitation(comparison.source)}${url}.`);
  return sentences.join(' ');
}

function priorSentence(prior: Prior): string {
  const url = prior.source.url ? `, ${prior.source.url}` : '';
  return `${prior.summary} (${shortCitation(prior.source)}${url}.)`;
}

const SUPPORTING_SENTENCE =
  'The analysis of your own data above stands as computed; this only adds the clinical context to read it by.';
const NO_SOURCE =
  "I don't have a reference source on that among my tools, so I'd rather not quote figures; a clinician or a published guideline is the place to check.";

function finalAnswer(req: ScriptedRequest<'domain_expert'>): string {
  const question = req.inputs.question.trim();
  const exchanges = toolExchanges(req.messages);
  const profile = okResults<Profile>(exchanges, 'user_profile')[0];
  const comparisons = okResults<RangeComparison>(exchanges, 'range_compare');
  const priors = okResults<{ priors: Prior[] }>(exchanges, 'literature_priors').flatMap((r) => r.priors);

  // Supported: the analysis above computed something (a number) for this answer to refer to.
  const supported = /\d/.test(req.inputs.supportingInsights);
  const parts: string[] = [];
  if (comparisons.length > 0) {
    const analysed = analysedLevel(req.inputs.supportingInsights);
    const quoted = new Set(mentionedBiomarkers(question).map((b) => b.value));
    parts.push(
      ...comparisons.map((c) =>
        rangeSentences(c, profile?.profile?.sex, profile, supported, c.value === analysed && !quoted.has(c.value)),
      ),
    );
  } else if (priors.length > 0) {
    const metric = firstDailyMetric(question);
    parts.push(priorSentence(priors.find((p) => metric !== undefined && p.feature === metric) ?? priors[0]));
  } else {
    parts.push(NO_SOURCE);
  }
  parts.push(...literatureSentences(exchanges));
  if (supported) parts.push(SUPPORTING_SENTENCE);
  return parts.join(' ');
}

interface PubMedArticle {
  title: string;
  journal: string;
  year: number | null;
  url: string;
}

/** What a PubMed search of this consultation found (its first article, cited with its URL), or that it failed. */
function literatureSentences(exchanges: ToolExchange[]): string[] {
  const searches = exchanges.filter((e) => e.name === 'pubmed_search');
  if (searches.length === 0) return [];
  const article = okResults<{ articles: PubMedArticle[] }>(searches, 'pubmed_search').flatMap((r) => r.articles)[0];
  if (article) {
    const year = article.year === null ? '' : `, ${article.year}`;
    return [
      `On the literature, PubMed lists "${article.title.replace(/\.$/, '')}" (${article.journal}${year}), ${article.url}.`,
    ];
  }
  return searches.some((e) => e.isError)
    ? ['I could not search the published literature just now, so this rests on the reference sources above.']
    : [];
}

/**
 * The level the supporting Data Science analysis reported ("Data Science: The computation found: mean
 * 62.11, …"), which a judgement question ("…and is it a concern?") asks to be read against a range.
 */
function analysedLevel(supportingInsights: string): number | undefined {
  const match = /^Data Science: .*?\b(?:mean|median|value) (-?\d+(?:\.\d+)?)/m.exec(supportingInsights);
  return match ? Number(match[1]) : undefined;
}

/**
 * With the network tools offered, a general topic to search PubMed for: the biomarker or metric the question is
 * about, in words ("heart_rate_variability" → "heart rate variability"), never the user's numbers or phrasing.
 */
function pubmedTopic(req: ScriptedRequest<'domain_expert'>): string | undefined {
  if (!req.tools.some((tool) => tool.name === 'pubmed_search')) return undefined;
  return searchTopic(req);
}

function searchTopic(req: ScriptedRequest<'domain_expert'>): string | undefined {
  const question = req.inputs.question.trim();
  const term = mentionedBiomarkers(question)[0]?.biomarker ?? firstDailyMetric(question);
  return term === undefined ? undefined : term.replace(/_/g, ' ');
}

const WEB_UNREACHABLE = 'I could not search the web just now, so this rests on the sources above.';

/**
 * With web search offered (a server tool: the API runs it inside this reply), the answer searches the web for the
 * same general topic as PubMed, fetches the first page found when web fetch is offered too, and ends on a sentence
 * citing that page; or says the web could not be searched.
 */
function webLookups(req: ScriptedRequest<'domain_expert'>): Pick<ScriptedResponse, 'serverToolUse' | 'cited'> & {
  unreachable: boolean;
} {
  const topic = searchTopic(req);
  if (!req.web.search || topic === undefined) return { unreachable: false };
  const uses: ScriptedServerToolUse[] = [];
  const found = req.web.search(topic);
  uses.push({ name: 'web_search', input: { query: topic }, outcome: found });
  if ('error_code' in found) return { serverToolUse: uses, unreachable: true };
  const page = found.results[0];
  if (!page) return { serverToolUse: uses, unreachable: false };
  if (req.web.fetch) {
    const fetched = req.web.fetch(page.url);
    uses.push({ name: 'web_fetch', input: { url: page.url }, outcome: fetched });
  }
  return {
    serverToolUse: uses,
    cited: { text: ` On the web, "${page.title}" says: ${firstSentence(page)}`, page },
    unreachable: false,
  };
}

function firstRoundCalls(question: string, supportingInsights: string): ScriptedToolUse[] {
  const biomarkers = mentionedBiomarkers(question);
  const calls: ScriptedToolUse[] = [{ name: 'user_profile', input: {} }];
  for (const { biomarker, value } of biomarkers) {
    if (value !== undefined) calls.push({ name: 'range_compare', input: { biomarker, value } });
  }
  const analysed = analysedLevel(supportingInsights);
  const unquoted = biomarkers.find((b) => b.value === undefined);
  if (analysed !== undefined && unquoted) {
    calls.push({ name: 'range_compare', input: { biomarker: unquoted.biomarker, value: analysed } });
  }
  const term = biomarkers[0]?.biomarker ?? firstDailyMetric(question);
  if (term !== undefined) calls.push({ name: 'literature_priors', input: { term } });
  return calls;
}

const hasToolResults = (messages: Anthropic.MessageParam[]) =>
  messages.some((m) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result'));

/** The lab results' names (platform/health-data) for the names range_compare takes. */
const LAB_NAME: Record<string, string> = { ldl: 'ldl_cholesterol', hdl: 'hdl_cholesterol' };

/**
 * The second round: a biomarker the question names without a value ("was my last LDL OK?") is looked up
 * in the user's latest labs (from the first round's user_profile) and compared with its range.
 */
function onFileComparisons(question: string, exchanges: ToolExchange[]): ScriptedToolUse[] {
  if (exchanges.some((e) => e.name === 'range_compare')) return [];
  const labs = okResults<Profile>(exchanges, 'user_profile')[0]?.latest_biomarkers ?? [];
  return mentionedBiomarkers(question).flatMap(({ biomarker, value }) => {
    const lab = value === undefined ? labs.find((l) => l.name === (LAB_NAME[biomarker] ?? biomarker)) : undefined;
    return lab ? [{ name: 'range_compare', input: { biomarker, value: lab.value, unit: lab.unit } }] : [];
  });
}

export const domainExpert: ScriptedRule<'domain_expert'> = {
  step: 'domain_expert',
  respond(req) {
    const question = req.inputs.question.trim();
    if (!hasToolResults(req.messages)) {
      const topic = pubmedTopic(req);
      const calls = firstRoundCalls(question, req.inputs.supportingInsights);
      return { toolUse: topic ? [...calls, { name: 'pubmed_search', input: { topic, max: 3 } }] : calls };
    }
    const lookups = onFileComparisons(question, toolExchanges(req.messages));
    if (lookups.length > 0) return { toolUse: lookups };
    const { unreachable, ...web } = webLookups(req);
    const text = finalAnswer(req);
    return { text: unreachable && !text.includes('could not search') ? `${text} ${WEB_UNREACHABLE}` : text, ...web };
  },
};
