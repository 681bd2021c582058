/**
 * Routing and computation agree: every data question of the phrasing corpus, carried through the
 * scripted model's rephrase and Data Science plan rules, reaches the production plan parser as the
 * spec the corpus expects (kind, statistic, table, feature, target and window), and the code rule
 * computes that same spec.
 */
import { isDeepStrictEqual } from 'node:util';
import { AGENT_LABELS, type ModelCallId } from '../../../contracts/steps';
import { parsePlan } from '../../../activities/agents/data-science/plan';
import { analysisCodeFor } from '../../../dev/scripted-model/language/analysis-code';
import type { DataSpec } from '../../../dev/scripted-model/language/understanding';
import { phrasingCorpus, type CorpusEntry } from './phrasing-corpus';
import { defaultRules } from '../../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../../dev/scripted-model/types';

const corpus = phrasingCorpus;

/** The demo data's span as the plan step is told it: "since" windows are counted back from `last`. */
const DATA_DAYS = { first: '2025-10-21', last: '2026-11-24' };

function ask<Call extends ModelCallId>(step: Call, inputs: unknown): string {
  const rule = defaultRules.find((r) => r.step === step) as ScriptedRule<Call>;
  const response = rule.respond({ step, inputs, model: 'm', messages: [], tools: [] } as never);
  if (!('text' in response) || response.text === undefined) throw new Error(`${step} answered without text`);
  return response.text;
}

/** The Data Science agent's question, as the rephrase rule writes it for this conversation. */
function dataScienceQuestion(entry: CorpusEntry): string {
  const messages = [...(entry.history ?? []), { role: 'user' as const, content: entry.question }];
  const agents = ['data_science'];
  const answer = JSON.parse(ask('rephrase', { messages, agents })) as { main_agent_question: string };
  return answer.main_agent_question;
}

const KIND = { description: 'scalar', trend: 'trend', association: 'association' } as const;

const LABS = new Set(['ldl_cholesterol', 'hdl_cholesterol', 'total_cholesterol', 'triglycerides', 'hba1c']);
for (const lab of ['fasting_glucose', 'ferritin', 'vitamin_d', 'tsh', 'hs_crp']) LABS.add(lab);

const day = (date: Date) => date.toISOString().slice(0, 10);
const at = (text: string) => new Date(`${text}T00:00:00Z`);
const DAY_MS = 86_400_000;

/**
 * The plan's table and feature: a biomarker is in the labs table; workouts are counted as `workouts` (a
 * count, or a change or difference of how many), and otherwise described by their duration or the
 * measure the question names (an association is with the day's minutes).
 */
function tableAndFeature(spec: DataSpec) {
  if (LABS.has(spec.feature)) return { table: 'labs', feature: spec.feature };
  if (spec.feature !== 'workouts') return { feature: spec.feature };
  const counted =
    spec.statistic === 'count' ||
    (['change', 'difference', 'per_week', 'per_month'].includes(spec.statistic) && spec.measure === undefined);
  return {
    table: 'workouts',
    feature: counted ? 'workouts' : (spec.measure ?? 'duration_minutes'),
    ...(spec.workout_type ? { workoutType: spec.workout_type } : {}),
  };
}

/** What the production plan should say for a corpus spec. */
function expectedPlanSpec(spec: DataSpec) {
  const kind =
    spec.kind === 'comparison'
      ? spec.statistic === 'difference' && spec.target === 'previous_period'
        ? 'trend'
        : 'scalar'
      : KIND[spec.kind];
  const window = spec.window;
  let windowDays: number | null;
  let offsetDays = 0;
  let since: string | undefined;
  let until: string | undefined;
  if ('since' in window) {
    // A month-day is the latest such day on or before the data's last day; its until the first on or after.
    const last = at(DATA_DAYS.last);
    let start = at(/^\d{4}-/.test(window.since) ? window.since : `${last.getUTCFullYear()}-${window.since}`);
    if (start > last) start = at(`${last.getUTCFullYear() - 1}-${window.since}`);
    let end = last;
    if (window.until !== undefined) {
      let stop = at(/^\d{4}-/.test(window.until) ? window.until : `${start.getUTCFullYear()}-${window.until}`);
      if (stop < start) stop = at(`${start.getUTCFullYear() + 1}-${window.until}`);
      until = day(stop);
      if (stop < last) end = stop;
    }
    windowDays = Math.round((end.getTime() - start.getTime()) / DAY_MS) + 1;
    offsetDays = Math.round((last.getTime() - end.getTime()) / DAY_MS);
    since = day(start);
  } else if (window.days === null && (spec.statistic === 'per_week' || spec.statistic === 'per_month')) {
    // A rate over every day the data covers needs that length.
    windowDays = Math.round((at(DATA_DAYS.last).getTime() - at(DATA_DAYS.first).getTime()) / DAY_MS) + 1;
  } else {
    windowDays = window.days;
    offsetDays = window.offset ?? 0;
  }
  const { feature, ...table } = tableAndFeature(spec);
  return {
    kind,
    statistic: spec.statistic,
    feature,
    target: kind === 'association' ? spec.target : null,
    windowDays,
    ...(offsetDays > 0 ? { offsetDays } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...table,
  };
}

const dataEntries = corpus.filter((entry) => entry.spec !== null);

test('the corpus has data questions of every kind to carry through', () => {
  expect(new Set(dataEntries.map((e) => e.spec!.kind))).toEqual(
    new Set(['description', 'trend', 'comparison', 'association']),
  );
});

test('every data question reaches the plan as the spec the corpus expects', () => {
  const wrong: string[] = [];
  for (const entry of dataEntries) {
    const question = dataScienceQuestion(entry);
    const { spec } = parsePlan(ask('ds_plan', { question, dataDays: DATA_DAYS }), null, DATA_DAYS.last);
    const expected = expectedPlanSpec(entry.spec!);
    // An association's two metrics may come in either order.
    const sameSpec =
      isDeepStrictEqual(spec, expected) ||
      (expected.kind === 'association' &&
        isDeepStrictEqual(spec, { ...expected, feature: expected.target, target: expected.feature }));
    if (!sameSpec)
      wrong.push(
        `${entry.id} "${entry.question}"\n    expected ${JSON.stringify(expected)}\n    got      ${JSON.stringify(spec)}`,
      );
  }
  expect(wrong).toEqual([]);
});

test('the code rule computes the spec the corpus expects', () => {
  const wrong: string[] = [];
  for (const entry of dataEntries) {
    const code = ask('ds_code', { question: dataScienceQuestion(entry), approach: 'as planned' });
    const spec = entry.spec!;
    const swapped = { ...spec, feature: spec.target!, target: spec.feature };
    const expected = [spec, ...(spec.kind === 'association' ? [swapped] : [])].map(
      (s) => `\`\`\`python\n${analysisCodeFor(s)}\n\`\`\``,
    );
    if (!expected.includes(code)) wrong.push(`${entry.id} "${entry.question}"`);
  }
  expect(wrong).toEqual([]);
});

test("the other agents get the user's own question, named by their labels", () => {
  const [entry] = dataEntries;
  const answer = JSON.parse(
    ask('rephrase', {
      messages: [{ role: 'user', content: entry.question }],
      agents: ['domain_expert', 'data_science'],
    }),
  ) as { main_agent_question: string; supporting_agent_questions: Record<string, string> };
  expect(answer.main_agent_question).toBe(`${entry.question.replace(/\?*$/, '')}?`);
  expect(Object.keys(answer.supporting_agent_questions)).toEqual([AGENT_LABELS.data_science]);
});
