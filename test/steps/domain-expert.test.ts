/**
 * The Domain Expert agent: its three offline tools on their own (reference ranges from the data file,
 * literature priors, the user's profile and labs from Postgres), the URL guard, and the whole
 * activity through the real LLM layer and the scripted model inside Temporal's activity context — the
 * tool loop and its ten-turn cap, error results for bad tool calls, narration events once per
 * invocation, and no URL in an answer that no tool returned.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { eventDataSchemas } from '../../contracts/event-data';
import {
  createConsultDomainExpert,
  type ConsultDomainExpertInput,
  type ConsultDomainExpertOutput,
} from '../../activities/agents/domain-expert';
import { lookUpPriors } from '../../activities/agents/domain-expert/literature-lookup';
import {
  compareToReferenceRange,
  findReferenceEntry,
  parseReferenceRanges,
  REFERENCE_RANGES,
  rangeCompareTool,
} from '../../activities/agents/domain-expert/range-compare';
import { ToolRequestError, type ToolContext } from '../../activities/agents/domain-expert/tool-contract';
import { domainExpertToolDefinitions, runDomainExpertTool } from '../../activities/agents/domain-expert/run-tool';

const DOMAIN_EXPERT_TOOL_DEFINITIONS = domainExpertToolDefinitions(undefined);
import { guardUrls, StreamingUrlGuard, urlsIn } from '../../activities/agents/domain-expert/url-guard';
import { readUserProfile } from '../../activities/agents/domain-expert/user-profile';
import { LITERATURE_PRIORS } from '../../activities/data/literature-priors';
import { DOMAIN_EXPERT_LAST_ROUND } from '../../activities/agents/domain-expert/prompt';
import { ConfigError, loadConfig } from '../../platform/config';
import { replaceUserHealthData } from '../../platform/health-data/store';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { ModelOutputInvalidError } from '../../platform/llm/errors';
import { domainExpert } from '../../dev/scripted-model/rules/domain-expert';
import type { ScriptedRequest, ScriptedResponse, ScriptedRule } from '../../dev/scripted-model/types';
import { expectSchema } from '../support/http';
import { startStepHarness, type StepHarness } from '../support/step-harness';

const ATP_III_URL = 'https://doi.org/10.1161/circ.106.25.3143';
const WHO_ACTIVITY_URL = 'https://doi.org/10.1136/bjsports-2020-102955';
const LDL_QUESTION = 'Is an LDL of 124 something to worry about?';
/** the Domain Expert's loop runs at most ten model turns. */
const MAX_MODEL_TURNS = 10;

/** What the canned Domain Expert answers; each case sets it before running the activity. */
let cannedRespond: (req: ScriptedRequest) => ScriptedResponse = () => ({ text: 'unset' });
const cannedDomainExpert: ScriptedRule = { step: 'domain_expert', respond: (req) => cannedRespond(req) };

let h: StepHarness;
let canned: StepHarness;
/** A model that pauses before each delta, as a real one does: each one reaches the log on its own. */
let slow: StepHarness;
beforeAll(async () => {
  [h, canned, slow] = await Promise.all([
    startStepHarness({ rules: [domainExpert] }),
    startStepHarness({ rules: [cannedDomainExpert] }),
    startStepHarness({ rules: [domainExpert], streamChunkDelayMs: 30 }),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), canned?.close(), slow?.close()]);
});
beforeEach(() => {
  h.scripted.requests.clear();
  canned.scripted.requests.clear();
});

let logged: LogEntry[] = [];
const capturingLogger = new DefaultLogger('WARN', (entry) => logged.push(entry));
beforeEach(() => {
  logged = [];
});

function runConsultation(
  harness: StepHarness,
  input: ConsultDomainExpertInput,
  info: Partial<Info> = {},
): Promise<ConsultDomainExpertOutput> {
  return new MockActivityEnvironment(info, { logger: capturingLogger }).run(
    createConsultDomainExpert(harness.deps),
    input,
  );
}

async function userOf(harness: StepHarness, turnId: string): Promise<string> {
  const { rows } = await harness.deps.pool.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [
    turnId,
  ]);
  return rows[0].user_id;
}

/** A new turn whose user has the synthetic profile and lab panels of `seed`. */
async function turnWithHealthData(harness: StepHarness, seed = 7) {
  const turnId = await harness.newTurn();
  const userId = await userOf(harness, turnId);
  const data = generateHealthData({ seed, days: 120, endDate: new Date('2025-06-30T00:00:00Z') });
  await replaceUserHealthData(harness.deps.pool, userId, data);
  return { turnId, userId, data };
}

const consultationInput = (
  turnId: string,
  userId: string,
  overrides: Partial<ConsultDomainExpertInput> = {},
): ConsultDomainExpertInput => ({
  turnId,
  userId,
  question: LDL_QUESTION,
  invocation: 'main',
  supportingInsights: '',
  ...overrides,
});

const ledger = (harness: StepHarness, turnId: string) =>
  harness.database.db.llmCall.findMany({ where: { turnId }, orderBy: { createdAt: 'asc' } });

const domainExpertRequests = (harness: StepHarness) =>
  harness.scripted.requests.entries().filter((r) => r.step === 'domain_expert');

/** The tool_result blocks of a logged request's last message. */
function lastToolResults(messages: Anthropic.MessageParam[]): Anthropic.ToolResultBlockParam[] {
  const last = messages.at(-1);
  if (!last || typeof last.content === 'string') return [];
  return last.content.filter((b): b is Anthropic.ToolResultBlockParam => b.type === 'tool_result');
}

const resultText = (block: Anthropic.ToolResultBlockParam) =>
  typeof block.content === 'string' ? block.content : JSON.stringify(block.content);

const numbersIn = (text: string) => (text.match(/\d+(?:\.\d+)?/g) ?? []).map(Number);

type Conversation = Pick<ScriptedRequest, 'messages'>;

function toolUseIn(req: Conversation): Array<{ name: string; input: unknown }> {
  return req.messages.flatMap((m) =>
    typeof m.content === 'string'
      ? []
      : m.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, input: b.input }] : [])),
  );
}

/** The URL the range_compare result of the conversation carries. */
function toolSourceUrl(req: Conversation): string {
  for (const m of req.messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) {
      if (b.type === 'tool_result' && !b.is_error) {
        const url = urlsIn(resultText(b))[0];
        if (url) return url;
      }
    }
  }
  throw new Error('no tool result with a URL');
}

const hasToolResult = (req: Conversation) =>
  req.messages.some((m) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result'));

describe('range_compare', () => {
  test('an LDL of 124 is in the near optimal/above optimal band of ATP III, with its source', () => {
    const comparison = compareToReferenceRange({ biomarker: 'ldl', value: 124 });
    expect(comparison).toMatchObject({ biomarker: 'ldl_cholesterol', value: 124, unit: 'mg/dL' });
    expect(comparison.classifications).toHaveLength(1);
    expect(comparison.classifications[0]).toMatchObject({
      sex: null,
      position: 'borderline',
      band: 'near optimal/above optimal',
      band_range: '100 to <130 mg/dL',
    });
    expect(comparison.classifications[0].scale.map((b) => b.range)).toEqual([
      '<100 mg/dL',
      '100 to <130 mg/dL',
      '130 to <160 mg/dL',
      '160 to <190 mg/dL',
      '≥190 mg/dL',
    ]);
    expect(comparison.source.url).toBe(ATP_III_URL);
  });

  test.each(['ldl', 'ldl_cholesterol', 'LDL-C', 'LDL cholesterol', ' Ldl c '])('"%s" names LDL cholesterol', (name) => {
    expect(findReferenceEntry(name)?.id).toBe('ldl_cholesterol');
  });

  test.each([
    ['ldl', 99.9, 'within', 'optimal'],
    ['ldl', 100, 'borderline', 'near optimal/above optimal'],
    ['ldl', 190, 'above', 'very high'],
    ['hba1c', 5.6, 'within', 'normal'],
    ['hba1c', 5.7, 'borderline', 'prediabetes'],
    ['systolic', 128, 'borderline', 'elevated'],
    ['diastolic', 80, 'above', 'stage 1 hypertension'],
    // The CDC/AHA bands are "1.0 to 3.0" and ">3.0": 3 itself is average risk.
    ['hs-crp', 3, 'borderline', 'average cardiovascular risk'],
    ['hs-crp', 3.1, 'above', 'high cardiovascular risk'],
    ['tsh', 4.12, 'within', 'within the reference interval'],
    ['vitamin d', 25, 'borderline', 'insufficiency'],
    ['rhr', 48, 'below', 'sinus bradycardia (often normal in fit people)'],
    // WHO 2020: 150 to 300 minutes a week of moderate activity, 21.4 to 42.9 minutes a day.
    ['active zone minutes', 21.3, 'below', 'below the WHO minimum of 150 minutes a week'],
    ['exercise', 21.4, 'within', '150 to 300 minutes a week, as WHO recommends'],
    ['azm', 42.9, 'within', '150 to 300 minutes a week, as WHO recommends'],
    ['MVPA', 43, 'above', 'more than 300 minutes a week, for additional health benefits'],
  ])('%s %d sits %s (%s)', (biomarker, value, position, band) => {
    expect(compareToReferenceRange({ biomarker, value }).classifications[0]).toMatchObject({ position, band });
  });

  test('a range that differs by sex is read for the given sex, and for both when the sex is unknown', () => {
    const female = compareToReferenceRange({ biomarker: 'hdl', value: 45, sex: 'female' }).classifications;
    const male = compareToReferenceRange({ biomarker: 'hdl', value: 45, sex: 'male' }).classifications;
    expect(female).toEqual([expect.objectContaining({ sex: 'female', position: 'below', band_range: '<50 mg/dL' })]);
    expect(male).toEqual([expect.objectContaining({ sex: 'male', position: 'within', band_range: '40 to <60 mg/dL' })]);
    const either = compareToReferenceRange({ biomarker: 'hdl', value: 45 }).classifications;
    expect(either.map((c) => [c.sex, c.position])).toEqual([
      ['male', 'within'],
      ['female', 'below'],
    ]);
    const ferritin = compareToReferenceRange({ biomarker: 'ferritin', value: 180, sex: 'female', age: 40 });
    expect(ferritin.classifications[0]).toMatchObject({ position: 'above', band: 'risk of iron overload' });
  });

  test('an age no range covers, a unit other than the range’s, or an unknown biomarker is refused', () => {
    expect(() => compareToReferenceRange({ biomarker: 'ldl', value: 124, age: 15 })).toThrow(
      /no ldl_cholesterol range applies to age 15 \(the ranges cover: adults aged 20 and over\)/,
    );
    expect(() => compareToReferenceRange({ biomarker: 'ldl', value: 3.2, unit: 'mmol/L' })).toThrow(
      /in mg\/dL, not mmol\/L/,
    );
    expect(() => compareToReferenceRange({ biomarker: 'apolipoprotein b', value: 90 })).toThrow(ToolRequestError);
    expect(compareToReferenceRange({ biomarker: 'ldl', value: 124, unit: 'MG/DL' }).unit).toBe('mg/dL');
  });

  test('the data file covers the common biomarkers, each with a sourced https URL', () => {
    expect(REFERENCE_RANGES.map((e) => e.id).sort()).toEqual(
      [
        'active_zone_minutes',
        'blood_pressure_diastolic',
        'blood_pressure_systolic',
        'fasting_glucose',
        'ferritin',
        'hba1c',
        'hdl_cholesterol',
        'hs_crp',
        'ldl_cholesterol',
        'resting_heart_rate',
        'total_cholesterol',
        'triglycerides',
        'tsh',
        'vitamin_d',
      ].sort(),
    );
    for (const entry of REFERENCE_RANGES) {
      expect(entry.source.url).toMatch(/^https:\/\//);
      expect(entry.source.citation.length).toBeGreaterThan(20);
    }
  });

  test('a data file with an unsourced entry, a scale that does not rise, or a name used twice is refused', () => {
    const entries = () => structuredClone(REFERENCE_RANGES) as unknown as Array<Record<string, unknown>>;
    expect(parseReferenceRanges(entries())).toHaveLength(REFERENCE_RANGES.length);

    const unsourced = entries();
    delete unsourced[3].source;
    expect(() => parseReferenceRanges(unsourced)).toThrow(/source/);

    const falling = entries();
    const ldl = falling[0] as { ranges: Array<{ bands: Array<{ upper?: number }> }> };
    ldl.ranges[0].bands[2].upper = 110;
    expect(() => parseReferenceRanges(falling)).toThrow(/upper bounds must increase/);

    const twice = entries();
    (twice[11] as { aliases: string[] }).aliases.push('LDL');
    expect(() => parseReferenceRanges(twice)).toThrow(/names given twice .*: ldl/);
  });

  test('the tool answers invalid input with an error result, not an exception', async () => {
    const ctx = { pool: h.deps.pool, turnId: 'turn_none', userId: 'user_none', now: new Date() };
    const wrongType = await rangeCompareTool.run({ biomarker: 'ldl', value: 'high' }, ctx);
    expect(wrongType.isError).toBe(true);
    expect(wrongType.content).toMatch(/^invalid input for range_compare: value: /);
    const extraKey = await rangeCompareTool.run({ biomarker: 'ldl', value: 124, units: 'mg/dL' }, ctx);
    expect(extraKey).toMatchObject({ isError: true, content: expect.stringMatching(/units/) });
    const unknown = await rangeCompareTool.run({ biomarker: 'apob', value: 90 }, ctx);
    expect(unknown).toMatchObject({ isError: true, content: expect.stringMatching(/no reference range for "apob"/) });
    const ok = await rangeCompareTool.run({ biomarker: 'LDL-C', value: 124 }, ctx);
    expect(ok.isError).toBe(false);
    expect(JSON.parse(ok.content)).toEqual(compareToReferenceRange({ biomarker: 'ldl', value: 124 }));
  });

  test('the tool definitions sent to the model are the JSON Schemas of the input schemas', () => {
    expect(DOMAIN_EXPERT_TOOL_DEFINITIONS.map((t) => t.name)).toEqual([
      'range_compare',
      'literature_priors',
      'user_profile',
    ]);
    expect(DOMAIN_EXPERT_TOOL_DEFINITIONS[0].input_schema).toMatchObject({
      type: 'object',
      required: ['biomarker', 'value'],
      additionalProperties: false,
    });
    expect(DOMAIN_EXPERT_TOOL_DEFINITIONS[0].input_schema).not.toHaveProperty('$schema');
  });
});

describe('literature_priors', () => {
  test('a biomarker alias finds the priors under its canonical name, with their sources', () => {
    const { priors } = lookUpPriors('LDL-C');
    expect(priors.map((p) => p.id)).toEqual(['ldl-cardiovascular']);
    expect(priors[0].source.citation).toMatch(/Cholesterol Treatment Trialists/);
  });

  test('a metric finds every prior whose feature or target contains it', () => {
    const { priors } = lookUpPriors('heart_rate_variability');
    const expected = LITERATURE_PRIORS.filter(
      (p) => p.feature.includes('heart_rate_variability') || p.target?.includes('heart_rate_variability'),
    );
    expect(priors.map((p) => p.id).sort()).toEqual(expected.map((p) => p.id).sort());
    expect(priors.map((p) => p.id)).toContain('hrv-heart-rate');
    expect(priors.length).toBeGreaterThan(2);
  });

  test('a term no prior mentions gives an empty list and says so', () => {
    expect(lookUpPriors('creatinine')).toEqual({
      term: 'creatinine',
      priors: [],
      note: 'no literature prior mentions "creatinine"',
    });
  });
});

describe('user_profile', () => {
  test('the profile with an age from the birth year, and the latest value of each lab biomarker', async () => {
    const { turnId, userId, data } = await turnWithHealthData(h);
    const now = new Date('2025-07-01T00:00:00Z');
    const result = await readUserProfile(h.deps.pool, { turnId, userId }, now);
    expect(result.profile).toEqual({
      sex: data.profile.sex,
      age: 2025 - data.profile.birth_year,
      birth_year: data.profile.birth_year,
      height_cm: data.profile.height_cm,
      weight_kg: data.profile.weight_kg,
    });
    const lastPanelDate = data.biomarkers
      .map((b) => b.taken_on)
      .sort()
      .at(-1);
    const latestPanel = data.biomarkers.filter((b) => b.taken_on === lastPanelDate);
    expect(result.latest_biomarkers).toEqual(
      latestPanel
        .map(({ name, value, unit, taken_on }) => ({ name, value, unit, taken_on }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(result.note).toBeUndefined();
  });

  test('a user with no profile and no labs gets a clear "no profile" result through the tool', async () => {
    const turnId = await h.newTurn();
    const ctx: ToolContext = { pool: h.deps.pool, turnId, userId: await userOf(h, turnId), now: new Date() };
    const outcome = await runDomainExpertTool('user_profile', {}, ctx);
    expect(outcome.isError).toBe(false);
    expect(JSON.parse(outcome.content)).toEqual({
      profile: null,
      latest_biomarkers: [],
      note: 'no profile: this user has no health profile and no lab results',
    });
  });

  test('an unknown tool name is an error result listing the tools', async () => {
    const ctx: ToolContext = { pool: h.deps.pool, turnId: 'turn_none', userId: 'user_none', now: new Date() };
    expect(await runDomainExpertTool('pubmed_search', { query: 'ldl' }, ctx)).toEqual({
      content: 'unknown tool "pubmed_search"; the tools are range_compare, literature_priors, user_profile',
      isError: true,
    });
  });
});

describe('URL guard', () => {
  const allowed = new Set([ATP_III_URL, 'https://doi.org/10.1016/S2468-2667(21)00302-9']);

  test('invented URLs go, a markdown link keeps its text, tool URLs stay (parentheses in a DOI included)', () => {
    const guarded = guardUrls(
      'See [the 2021 study](https://example.com/fake-study) and https://example.org/made-up. ' +
        `Guideline: (${ATP_III_URL}). Steps: [Paluch 2022](https://doi.org/10.1016/S2468-2667(21)00302-9), ` +
        '<https://example.net/angled>.',
      allowed,
    );
    expect(guarded.text).toBe(
      `See the 2021 study and. Guideline: (${ATP_III_URL}). Steps: [Paluch 2022](https://doi.org/10.1016/S2468-2667(21)00302-9).`,
    );
    expect(guarded.kept).toEqual([ATP_III_URL, 'https://doi.org/10.1016/S2468-2667(21)00302-9']);
    expect(guarded.removed).toEqual([
      'https://example.com/fake-study',
      'https://example.org/made-up',
      'https://example.net/angled',
    ]);
  });

  test('a URL that only extends or shortens a tool URL is not the tool URL', () => {
    const guarded = guardUrls(`${ATP_III_URL}/supplement and https://doi.org/10.1161`, allowed);
    expect(guarded.kept).toEqual([]);
    expect(guarded.removed).toEqual([`${ATP_III_URL}/supplement`, 'https://doi.org/10.1161']);
  });

  test('a link whose text is itself an invented URL loses both', () => {
    const guarded = guardUrls('[https://fake.example/a](https://fake.example/a)', allowed);
    expect(guarded.text).toBe('');
    expect(guarded.removed).toHaveLength(2);
  });

  test('streamed in pieces of any size, the guarded text is the same, and no piece ever shows an invented URL', () => {
    const texts = [
      'See [the 2021 study](https://example.com/fake-study) and https://example.org/made-up. ' +
        `Guideline: (${ATP_III_URL}). Steps: [Paluch 2022](https://doi.org/10.1016/S2468-2667(21)00302-9), ` +
        '<https://example.net/angled>.',
      `Above optimal (source: ${ATP_III_URL}). A trial agrees (https://example.com/fake), see [a review](https://example.org/r).`,
      '[https://example.com/a](https://example.com/a) and [a "quoted" link](https://example.com/b "a title") ok',
      'Source, https://example.com/x. Next\nline [note] and [unclosed text',
    ];
    for (const text of texts) {
      const whole = guardUrls(text, allowed);
      for (let size = 1; size <= text.length; size += size < 8 ? 1 : 7) {
        const guard = new StreamingUrlGuard(allowed);
        const pieces: string[] = [];
        for (let at = 0; at < text.length; at += size) pieces.push(guard.push(text.slice(at, at + size)));
        pieces.push(guard.end());
        expect(pieces.join('')).toBe(whole.text.trim());
        expect(guard.text).toBe(whole.text.trim());
        expect(pieces.filter((piece) => /example\.(com|org|net)/.test(piece))).toEqual([]);
        expect(guard.kept).toEqual(whole.kept);
        expect(guard.removed).toEqual(whole.removed);
      }
    }
  });

  test('URLs are read out of JSON tool results whole', () => {
    expect(urlsIn(JSON.stringify({ source: { url: 'https://doi.org/10.1016/S2468-2667(21)00302-9' } }))).toEqual([
      'https://doi.org/10.1016/S2468-2667(21)00302-9',
    ]);
  });
});

describe('consultDomainExpert', () => {
  test('the LDL question: tools first, then an answer with the guideline range and its URL', async () => {
    const { turnId, userId, data } = await turnWithHealthData(h);
    const result = await runConsultation(h, consultationInput(turnId, userId));

    const calls = await ledger(h, turnId);
    expect(calls.map((c) => [c.step, c.outcome])).toEqual([
      ['domain_expert', 'success'],
      ['domain_expert', 'success'],
    ]);
    expect(result.costUsd).toBeCloseTo(
      calls.reduce((sum, c) => sum + c.costUsd.toNumber(), 0),
      6,
    );
    expect(result.toolCalls).toBe(3);
    expect(result.answer).toContain('A reading of 124 mg/dL for LDL cholesterol is borderline');
    expect(result.answer).toContain('"near optimal/above optimal" band (100 to <130 mg/dL)');
    expect(result.answer).toContain('<100 mg/dL is optimal');
    expect(result.answer).toContain(ATP_III_URL);
    expect(result.urls).toEqual([ATP_III_URL]);
    // From the user_profile tool: the user's own latest LDL, which differs from the one asked about.
    const latestLdl = data.biomarkers.filter((b) => b.name === 'ldl_cholesterol').at(-1);
    expect(latestLdl?.value).not.toBe(124);
    expect(result.answer).toContain(
      `Your latest LDL cholesterol on file is ${latestLdl?.value} mg/dL (${latestLdl?.taken_on}).`,
    );

    // The model was given the tools and, on its second turn, the results of the three calls it made.
    const [first, second] = domainExpertRequests(h);
    expect(first.messages).toHaveLength(1);
    expect(first.messages[0].content).toBe(`QUESTION:\n${LDL_QUESTION}`);
    const results = lastToolResults(second.messages);
    expect(results).toHaveLength(3);
    expect(results.every((r) => r.is_error === undefined)).toBe(true);
    expect(results.map(resultText).join('\n')).toContain(ATP_III_URL);
  });

  test('as main agent after supporting agents, it refers to their insights without a number of its own', async () => {
    const { turnId, userId } = await turnWithHealthData(h);
    const insights = 'Your LDL averaged 131 mg/dL across your last three lab panels (n=3).';
    const result = await runConsultation(h, consultationInput(turnId, userId, { supportingInsights: insights }));

    const [first, second] = domainExpertRequests(h);
    expect(first.messages[0].content).toBe(`QUESTION:\n${LDL_QUESTION}\n\nSUPPORTING INSIGHTS:\n${insights}`);
    expect(result.answer).toContain('The analysis of your own data above stands as computed');
    // The user's own numbers are the supporting agent's to report.
    expect(result.answer).not.toContain('on file');
    // Every number in the answer comes from the question or a tool result, never from the insights alone.
    const toolNumbers = new Set(numbersIn(lastToolResults(second.messages).map(resultText).join('\n')));
    const questionNumbers = new Set(numbersIn(LDL_QUESTION));
    const unsourced = numbersIn(result.answer).filter((n) => !toolNumbers.has(n) && !questionNumbers.has(n));
    expect(unsourced).toEqual([]);
  });

  test('"Am I getting enough exercise?": the level Data Science found, against the WHO guideline, unrestated', async () => {
    const { turnId, userId } = await turnWithHealthData(h);
    const question = 'Am I getting enough exercise?';
    // What the supporting Data Science run gives for this question: the mean of active_zone_minutes over 30 days.
    const insights = 'Data Science: The computation found: mean 26.43, n 28.';
    const result = await runConsultation(
      h,
      consultationInput(turnId, userId, { question, supportingInsights: insights }),
    );

    const [, second] = domainExpertRequests(h);
    expect(toolUseIn(second)).toEqual([
      { name: 'user_profile', input: {} },
      { name: 'range_compare', input: { biomarker: 'active_zone_minutes', value: 26.43 } },
      { name: 'literature_priors', input: { term: 'active_zone_minutes' } },
    ]);
    expect(result.answer).toContain(
      'Your moderate-to-vigorous physical activity from the analysis above is within the reference range: ' +
        'it falls in the "150 to 300 minutes a week, as WHO recommends" band (21.4 to 42.9 min/day)',
    );
    expect(result.answer).toContain(`Source: Bull FC, Al-Ansari SS, Biddle S, et al (2020), ${WHO_ACTIVITY_URL}.`);
    expect(result.answer).toContain('The analysis of your own data above stands as computed');
    expect(result.urls).toEqual([WHO_ACTIVITY_URL]);
    // The user's own level is the supporting agent's to report: every number is the guideline's.
    const toolNumbers = new Set(numbersIn(lastToolResults(second.messages).map(resultText).join('\n')));
    expect(numbersIn(result.answer).filter((n) => !toolNumbers.has(n))).toEqual([]);
    expect(result.answer).not.toContain('26.43');
  });

  test('a blood pressure reading is compared as systolic and diastolic, each against the ACC/AHA bands', async () => {
    const { turnId, userId } = await turnWithHealthData(h);
    const question = 'My blood pressure was 132/84 this morning. Is that high?';
    const result = await runConsultation(h, consultationInput(turnId, userId, { question }));
    expect(result.answer).toContain('A reading of 132 mmHg for systolic blood pressure is above the reference range');
    expect(result.answer).toContain('"stage 1 hypertension" band (130 to <140 mmHg)');
    expect(result.answer).toContain('A reading of 84 mmHg for diastolic blood pressure is above the reference range');
    expect(result.answer).toContain('"stage 1 hypertension" band (80 to <90 mmHg)');
    expect(result.urls).toEqual(['https://doi.org/10.1161/HYP.0000000000000065']);
  });

  test('a general question is answered from the literature priors, with the prior’s URL', async () => {
    const { turnId, userId } = await turnWithHealthData(h);
    const result = await runConsultation(h, consultationInput(turnId, userId, { question: 'What is HRV?' }));
    const hrvPrior = LITERATURE_PRIORS.find((p) => p.id === 'hrv-heart-rate');
    expect(result.answer).toContain(hrvPrior?.summary);
    expect(result.urls).toEqual([hrvPrior?.source.url]);
    expect(toolUseIn(domainExpertRequests(h)[1])).toEqual([
      { name: 'user_profile', input: {} },
      { name: 'literature_priors', input: { term: 'heart_rate_variability' } },
    ]);
  });

  test('an answer citing URLs no tool returned loses them (a link keeps its text), and a warning counts them', async () => {
    cannedRespond = (req) => {
      if (!hasToolResult(req)) return { toolUse: [{ name: 'range_compare', input: { biomarker: 'ldl', value: 124 } }] };
      return {
        text:
          `An LDL of 124 mg/dL is above optimal (source: ${toolSourceUrl(req)}). ` +
          'A large trial agrees (https://example.com/fake-study), see also [this meta-analysis](https://example.org/meta).',
      };
    };
    const turnId = await canned.newTurn();
    const result = await runConsultation(canned, consultationInput(turnId, await userOf(canned, turnId)));

    expect(result.answer).toBe(
      `An LDL of 124 mg/dL is above optimal (source: ${ATP_III_URL}). A large trial agrees, see also this meta-analysis.`,
    );
    expect(result.urls).toEqual([ATP_III_URL]);
    const warnings = logged.filter((e) => e.level === 'WARN' && /URLs no tool returned/.test(e.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].meta).toMatchObject({ turnId, removed: 2 });
    // The narrated answer is the guarded one: the invented URLs were never streamed.
    const thoughts = (await canned.deps.events.readAfter(turnId, 0)).filter((e) => e.type === 'agent.thought');
    expect(thoughts.map((e) => e.data.delta).join('')).toBe(`[range_compare ldl 124]\n${result.answer}`);
  });

  test('a model that never stops calling tools gets exactly ten turns, then its text is the answer', async () => {
    cannedRespond = () => ({ text: 'Still checking.', toolUse: [{ name: 'user_profile', input: {} }] });
    const turnId = await canned.newTurn();
    const result = await runConsultation(canned, consultationInput(turnId, await userOf(canned, turnId)));

    expect(result.answer).toBe('Still checking.');
    expect(result.toolCalls).toBe(MAX_MODEL_TURNS - 1);
    expect(await ledger(canned, turnId)).toHaveLength(MAX_MODEL_TURNS);
    const requests = domainExpertRequests(canned);
    expect(requests).toHaveLength(MAX_MODEL_TURNS);
    // Only the last turn is told that the tool rounds are over.
    const lastRoundNotes = requests.map((r) => JSON.stringify(r.messages.at(-1)).includes(DOMAIN_EXPERT_LAST_ROUND));
    expect(lastRoundNotes).toEqual([...Array(MAX_MODEL_TURNS - 1).fill(false), true]);
    expect(logged.some((e) => /still asked for tools on its last model turn/.test(e.message))).toBe(true);
  });

  test('ten turns of tool calls with no text at all is invalid model output, so Temporal retries', async () => {
    cannedRespond = () => ({ toolUse: [{ name: 'user_profile', input: {} }] });
    const turnId = await canned.newTurn();
    await expect(runConsultation(canned, consultationInput(turnId, await userOf(canned, turnId)))).rejects.toThrow(
      ModelOutputInvalidError,
    );
    expect(domainExpertRequests(canned)).toHaveLength(MAX_MODEL_TURNS);
    expect(await ledger(canned, turnId)).toHaveLength(MAX_MODEL_TURNS);
  });

  test('an unknown tool and invalid tool input come back as error results, and the loop goes on', async () => {
    cannedRespond = (req) => {
      if (!hasToolResult(req)) {
        return {
          toolUse: [
            { name: 'pubmed_search', input: { query: 'ldl cholesterol' } },
            { name: 'range_compare', input: { biomarker: 'ldl', value: 'high' } },
          ],
        };
      }
      if (toolUseIn(req).length === 2) {
        return { toolUse: [{ name: 'range_compare', input: { biomarker: 'ldl', value: 124 } }] };
      }
      return { text: `Against the guideline (${toolSourceUrl(req)}), 124 mg/dL is above optimal.` };
    };
    const turnId = await canned.newTurn();
    const result = await runConsultation(canned, consultationInput(turnId, await userOf(canned, turnId)));

    const requests = domainExpertRequests(canned);
    expect(requests).toHaveLength(3);
    const errors = lastToolResults(requests[1].messages);
    expect(errors.map((r) => [r.is_error, resultText(r)])).toEqual([
      [true, 'unknown tool "pubmed_search"; the tools are range_compare, literature_priors, user_profile'],
      [true, expect.stringMatching(/^invalid input for range_compare: value: /)],
    ]);
    expect(lastToolResults(requests[2].messages).map((r) => r.is_error)).toEqual([undefined]);
    expect(result).toMatchObject({ toolCalls: 3, urls: [ATP_III_URL] });
  });

  test('the answer streams: several thoughts while the model writes, before agent.completed, that add up to the answer', async () => {
    const { turnId, userId } = await turnWithHealthData(slow);
    const result = await runConsultation(slow, consultationInput(turnId, userId));
    const events = (await slow.deps.events.readAfter(turnId, 0)).filter((e) =>
      ['agent.started', 'agent.thought', 'agent.completed'].includes(e.type),
    );
    expect(events.map((e) => e.type).filter((t) => t !== 'agent.thought')).toEqual([
      'agent.started',
      'agent.completed',
    ]);
    const thoughts = events.filter((e) => e.type === 'agent.thought');
    expect(thoughts.every((e) => e.data.agent === 'domain_expert' && e.data.attempt === 1)).toBe(true);
    // The tool calls first, a line each; then the answer as the model wrote it, in several deltas.
    const calls = thoughts.filter((e) => /^\[\w+.*\]\n$/.test(String(e.data.delta))).length;
    expect(calls).toBe(3);
    const answerDeltas = thoughts.slice(calls).map((e) => e.data.delta);
    expect(answerDeltas.length).toBeGreaterThan(3);
    expect(answerDeltas.join('')).toBe(result.answer);
    expect(thoughts.map((e) => e.data.delta).join('')).toBe(
      `[user_profile]\n[range_compare ldl 124]\n[literature_priors ldl]\n${result.answer}`,
    );
  });

  test('text the model writes before its tool calls streams too, and the calls follow on lines of their own', async () => {
    cannedRespond = (req) =>
      hasToolResult(req)
        ? { text: `Against the guideline (${toolSourceUrl(req)}), 124 mg/dL is above optimal.` }
        : {
            text: 'Let me check the range, see https://example.com/invented.',
            toolUse: [{ name: 'range_compare', input: { biomarker: 'ldl', value: 124 } }],
          };
    const turnId = await canned.newTurn();
    const result = await runConsultation(canned, consultationInput(turnId, await userOf(canned, turnId)));
    const thoughts = (await canned.deps.events.readAfter(turnId, 0)).filter((e) => e.type === 'agent.thought');
    // The invented URL was never streamed: the guard holds a possible URL back until it can judge it.
    expect(thoughts.map((e) => e.data.delta).join('')).toBe(
      `Let me check the range, see.\n[range_compare ldl 124]\n${result.answer}`,
    );
    expect(result.answer).toBe(`Against the guideline (${ATP_III_URL}), 124 mg/dL is above optimal.`);
  });

  test('narration: started once per invocation, a thought per tool call and for the answer, completed with the cost', async () => {
    const { turnId, userId } = await turnWithHealthData(h);
    const first = await runConsultation(h, consultationInput(turnId, userId));
    await runConsultation(h, consultationInput(turnId, userId));
    await runConsultation(h, consultationInput(turnId, userId, { invocation: 'reflection', question: 'What is HRV?' }));

    const events = (await h.deps.events.readAfter(turnId, 0)).filter((e) =>
      ['agent.started', 'agent.thought', 'agent.completed'].includes(e.type),
    );
    for (const event of events) {
      expectSchema(eventDataSchemas[event.type as 'agent.thought'], event.data);
      expect(event.data.agent).toBe('domain_expert');
    }
    const started = events.filter((e) => e.type === 'agent.started');
    expect(started.map((e) => e.data.question)).toEqual([LDL_QUESTION, 'What is HRV?']);
    const completed = events.filter((e) => e.type === 'agent.completed');
    expect(completed).toHaveLength(2);
    expect(completed[0].data).toMatchObject({ cost_usd: first.costUsd, output_summary: first.answer.slice(0, 160) });

    // The first run's narration, between its started and completed events: the calls, then the answer.
    const firstRun = events.slice(0, events.indexOf(completed[0]) + 1);
    const narration = firstRun.map((e) => (e.type === 'agent.thought' ? e.data.delta : e.type));
    expect(narration.slice(0, 4)).toEqual([
      'agent.started',
      '[user_profile]\n',
      '[range_compare ldl 124]\n',
      '[literature_priors ldl]\n',
    ]);
    expect(narration.at(-1)).toBe('agent.completed');
    expect(narration.slice(4, -1).join('')).toBe(first.answer);
    expect(firstRun.filter((e) => e.type === 'agent.thought').every((e) => e.data.attempt === 1)).toBe(true);
  });

  test('a retried attempt is announced, and its thoughts and ledger rows carry the attempt', async () => {
    const { turnId, userId } = await turnWithHealthData(h);
    await runConsultation(h, consultationInput(turnId, userId), { attempt: 2 });
    const events = await h.deps.events.readAfter(turnId, 0);
    expect(events.filter((e) => e.type === 'step.retry').map((e) => e.data)).toEqual([
      expect.objectContaining({ step: 'domain_expert', attempt: 2 }),
    ]);
    const thoughts = events.filter((e) => e.type === 'agent.thought');
    expect(thoughts.length).toBeGreaterThan(0);
    expect(thoughts.every((e) => e.data.attempt === 2)).toBe(true);
    expect((await ledger(h, turnId)).map((c) => c.attempt)).toEqual([2, 2]);
  });
});

describe('AMY_DE_NETWORK_TOOLS', () => {
  const base = { DATABASE_URL: 'postgresql://localhost:5432/amy' };

  test('is off by default and may be set to false', () => {
    expect(loadConfig(base).AMY_DE_NETWORK_TOOLS).toBe(false);
    expect(loadConfig({ ...base, AMY_DE_NETWORK_TOOLS: 'false' }).AMY_DE_NETWORK_TOOLS).toBe(false);
  });

  test('set to true, it needs NCBI_EMAIL, the contact NCBI asks of every E-utilities client', () => {
    expect(() => loadConfig({ ...base, AMY_DE_NETWORK_TOOLS: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, AMY_DE_NETWORK_TOOLS: 'true' })).toThrow(
      /NCBI_EMAIL: AMY_DE_NETWORK_TOOLS=true needs/,
    );
    const on = loadConfig({ ...base, AMY_DE_NETWORK_TOOLS: 'true', NCBI_EMAIL: 'ops@example.org' });
    expect(on).toMatchObject({ AMY_DE_NETWORK_TOOLS: true, NCBI_TOOL: 'amy-turn-service' });
    expect(() => loadConfig({ ...base, AMY_DE_NETWORK_TOOLS: 'yes' })).toThrow(/AMY_DE_NETWORK_TOOLS/);
  });
});
