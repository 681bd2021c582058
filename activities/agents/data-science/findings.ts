/**
 * Data Science, stage 4 (docs/design.md#data-science): the structured findings validation runs on.
 *
 * - A descriptive ask ("what is my average X?", or a plan whose kind is a plain level) skips the
 *   model's extraction, but its numbers must still reach the Fact Sheet: they become
 *   one finding deterministically, straight from the sandbox result and the plan's spec.
 * - Otherwise the validator model extracts findings from the result. Its numbers are only kept where
 *   they trace back to a number the code actually returned (the fact-check's tolerance): extraction
 *   structures the result, it never adds to it.
 * Finding ids are assigned here, not by the model: `<prefix>-001`, `<prefix>-002`, ….
 */
import { log } from '@temporalio/activity';
import { z } from 'zod';
import { findingSchema, type AgentFinding, type AnalysisStatistic, type Finding } from '../../../contracts/findings';
import { completeStep } from '../../runtime/complete-step';
import { withinTolerance } from '../../../checks/fact-check';
import { EXTRACT_SYSTEM, extractUserPrompt } from './prompt';
import { columnUnit } from '../../../contracts/health-records';
import { labBiomarker } from '../../../platform/health-data/labs';
import { parseModelJson } from '../../../platform/llm';
import type { StepDeps } from '../../runtime/step-deps';
import type { Invocation } from '../../../contracts/steps';
import type { AnalysisSpec } from './analysis-spec';
import type { AnalysisPlan } from './plan';

type Numbers = Finding['numbers'];

/** Whether a question asks after a level, not a relationship or a change. */
export function looksDescriptive(question: string): boolean {
  const q = question.toLowerCase();
  if (/\b(correlat|relat|associat|affect|impact|influenc|trend|chang|drop|declin|increas|decreas|improv)\w*/.test(q)) {
    return false;
  }
  return (
    /\b(what(?:'s| is| was| are)|how (?:much|many|long|high|low)|compute the)\b/.test(q) &&
    /\b(average|mean|median|typical|usual|total|standard deviation|sd|spread|by day of week)\b/.test(q)
  );
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const numberKey = (key: string) =>
  key
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');

/** The result's finite numbers, one level of nesting flattened (`by_day.Monday` → `by_day_monday`). */
export function resultNumbers(result: unknown): Numbers {
  const numbers: Numbers = {};
  const put = (key: string, value: unknown) => {
    const k = numberKey(key);
    if (!k) return;
    if (isFiniteNumber(value)) numbers[k] = value;
    else if (Array.isArray(value) && value.length === 2 && value.every(isFiniteNumber)) {
      numbers[k] = [value[0] as number, value[1] as number];
    }
  };
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    put('value', result);
    return numbers;
  }
  for (const [key, value] of Object.entries(result)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, inner] of Object.entries(value)) put(`${key}_${sub}`, inner);
    } else put(key, value);
  }
  return numbers;
}

/** Every finite number anywhere in the result: what an extracted number must trace back to. */
function allNumbers(value: unknown, out: number[] = []): number[] {
  if (isFiniteNumber(value)) out.push(value);
  else if (Array.isArray(value)) for (const v of value) allNumbers(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) allNumbers(v, out);
  return out;
}

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** "October 2026" for a whole calendar month, "2025" for a whole year; null for any other span. */
function calendarName(since: string, until: string): string | null {
  const [year, month, day] = since.split('-').map(Number);
  const monthEnd = new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
  if (day === 1 && until === monthEnd) return `${MONTH_NAMES[month - 1]} ${year}`;
  if (since.endsWith('-01-01') && until === `${year}-12-31`) return String(year);
  return null;
}

export function windowLabel(windowDays: number | null, offsetDays = 0, since?: string, until?: string): string {
  if (windowDays === null) return 'all available days';
  // A window the user gave as dates is named by them: its length in days is nobody's claim.
  if (since && until) return calendarName(since, until) ?? `${since} to ${until}`;
  if (since) return `the days since ${since}`;
  if (offsetDays > 0 && windowDays === 1) {
    return offsetDays === 1 ? 'the day before the last day' : `the day ${offsetDays} days before the last day`;
  }
  if (offsetDays > 0) return `the ${windowDays} days before the last ${offsetDays} days`;
  return windowDays === 1 ? 'the last day' : `the last ${windowDays} days`;
}

const humanise = (column: string) => column.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

const specWindow = (spec: AnalysisSpec) => windowLabel(spec.windowDays, spec.offsetDays, spec.since, spec.until);

/** What a workouts or labs spec is about, in words: "running workouts", "distance of cycling workouts", "LDL cholesterol". */
function subject(spec: AnalysisSpec): string {
  if (spec.table === 'labs') return labBiomarker(spec.feature)?.label ?? spec.feature.replace(/_/g, ' ');
  if (spec.table !== 'workouts') return spec.feature.replace(/_/g, ' ');
  const workouts = `${spec.workoutType ? `${spec.workoutType} ` : ''}workouts`;
  return spec.feature === 'workouts' ? workouts : `${spec.feature.replace(/_/g, ' ')} of ${workouts}`;
}

/** What a workout column is called in a claim. */
const WORKOUT_MEASURES: Record<string, string> = {
  duration_minutes: 'duration',
  distance_km: 'distance',
  calories: 'calories',
  avg_heart_rate: 'average heart rate',
};

/** A description of workouts, named as people say it: "Longest running workout", "Number of workouts". */
function workoutLevel(spec: AnalysisSpec): string | null {
  const workout = `${spec.workoutType ? `${spec.workoutType} ` : ''}workout`;
  const measure = WORKOUT_MEASURES[spec.feature];
  const period = spec.statistic === 'per_week' ? 'week' : spec.statistic === 'per_month' ? 'month' : null;
  if (period) {
    const what = measure ? `${measure === 'duration' ? 'time' : measure} of ${workout}s` : `${workout}s`;
    return `${what.replace(/^./, (c) => c.toUpperCase())} per ${period}`;
  }
  if (spec.feature === 'workouts' || spec.statistic === 'count')
    return spec.statistic === 'count' || spec.statistic === 'total' ? `Number of ${workout}s` : null;
  if (!measure) return null;
  switch (spec.statistic ?? 'mean') {
    case 'total':
      return spec.feature === 'duration_minutes' ? `Total time of ${workout}s` : `Total ${measure} of ${workout}s`;
    case 'max':
      return spec.feature === 'duration_minutes'
        ? `Longest ${workout}`
        : spec.feature === 'distance_km'
          ? `Farthest ${workout}`
          : `Highest ${measure} of a ${workout}`;
    case 'min':
      return spec.feature === 'duration_minutes' ? `Shortest ${workout}` : `Lowest ${measure} of a ${workout}`;
    case 'mean':
      return `Average ${measure} of a ${workout}`;
    case 'median':
      return `Median ${measure} of a ${workout}`;
    case 'latest':
      return `The latest ${workout}'s ${measure}`;
    default:
      return null;
  }
}

/** A description of a lab biomarker's panels. */
function labLevel(spec: AnalysisSpec): string | null {
  const label = subject(spec);
  switch (spec.statistic ?? 'latest') {
    case 'latest':
      return `Latest ${label} result`;
    case 'latest_change':
      return `${label} at the latest panel against the previous one and the first`;
    case 'mean':
      return `Average ${label} across panels`;
    case 'min':
      return `Lowest ${label} result`;
    case 'max':
      return `Highest ${label} result`;
    case 'count':
      return `Number of ${label} results`;
    default:
      return null;
  }
}

function specClaim(spec: AnalysisSpec): string {
  const window = specWindow(spec);
  if (spec.kind === 'scalar' && (spec.table === 'workouts' || spec.table === 'labs')) {
    const level = spec.table === 'workouts' ? workoutLevel(spec) : labLevel(spec);
    if (level) return `${level} over ${window}`;
  }
  if (spec.kind === 'association')
    return `${humanise(subject(spec))} and ${spec.target!.replace(/_/g, ' ')} over ${window}`;
  if (spec.kind === 'trend') return `Change in ${subject(spec)} over ${window} versus the period before`;
  const level = spec.statistic ? LEVEL_WORDS[spec.statistic] : undefined;
  return level ? `${level} ${subject(spec)} over ${window}` : `${humanise(spec.feature)} over ${window}`;
}

/** How a level's claim names what was computed (a scalar spec's statistic). */
const LEVEL_WORDS: Partial<Record<AnalysisStatistic, string>> = {
  mean: 'Average',
  median: 'Median',
  min: 'Lowest',
  max: 'Highest',
  total: 'Total',
  sd: 'Day-to-day spread of',
  count: 'Number of days with',
  latest: 'Latest',
  day_of_week: 'Day-of-week pattern of',
  difference: 'Weekend-versus-weekday difference in',
  latest_change: 'Latest value against the previous one of',
};

/** The unit of the spec's numbers: a daily column's, a workout column's, a biomarker's; null for counts and ratios. */
function specUnit(spec: AnalysisSpec): string | null {
  if (spec.kind === 'association') return null;
  if (spec.table === 'labs') return labBiomarker(spec.feature)?.unit ?? null;
  if (spec.table === 'workouts') return WORKOUT_UNITS[spec.feature] ?? null;
  return columnUnit(spec.feature);
}

const WORKOUT_UNITS: Record<string, string> = {
  duration_minutes: 'min',
  distance_km: 'km',
  calories: 'kcal',
  avg_heart_rate: 'bpm',
};

/** The descriptive path: the result's numbers as one finding of the plan's kind, no model involved. */
export function descriptiveFinding(id: string, spec: AnalysisSpec, result: unknown): Finding | null {
  const numbers = resultNumbers(result);
  if (Object.keys(numbers).length === 0) return null;
  const n = numbers.n;
  return findingSchema.parse({
    id,
    claim: specClaim(spec),
    kind: spec.kind,
    feature: spec.feature,
    target: spec.target,
    numbers,
    n: typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0,
    window: specWindow(spec),
    unit: specUnit(spec),
  });
}

const extractedSchema = z.array(
  z.object({
    claim: z.string().min(1),
    kind: z.string(),
    feature: z.string(),
    target: z.string().nullable().optional(),
    numbers: z.record(z.string(), z.unknown()),
    n: z.number().optional(),
    window: z.string().optional(),
    unit: z.string().nullable().optional(),
  }),
);

/**
 * The fact-check's tolerance (2 %, 0.05 floor) without its allowance for a dropped sign: prose may say
 * "fell by 3.4", but an extracted number is a value, and a flipped correlation is a different claim.
 */
const tracesTo = (value: number, reference: number) =>
  withinTolerance(value, reference) && Math.sign(value) === Math.sign(reference);

/** Keeps the numbers that trace to the result (a CI pair only when both ends do). */
function tracedNumbers(numbers: Record<string, unknown>, traceable: number[]): Numbers {
  const traces = (v: number) => traceable.some((r) => tracesTo(v, r));
  const kept: Numbers = {};
  for (const [key, value] of Object.entries(numbers)) {
    const k = numberKey(key);
    if (!k) continue;
    if (isFiniteNumber(value) && traces(value)) kept[k] = value;
    else if (Array.isArray(value) && value.length === 2 && value.every(isFiniteNumber) && value.every(traces)) {
      kept[k] = [value[0] as number, value[1] as number];
    }
  }
  return kept;
}

export interface ExtractFindingsInput {
  turnId: string;
  /** The agent's role in the turn; names the run in the Web UI's activity summary (step 3, 4 or 5). */
  invocation: Invocation;
  question: string;
  plan: AnalysisPlan;
  result: unknown;
  summary: string;
  /** `ds` for the turn's Data Science run, `dsr` for a reflection follow-up. */
  idPrefix: string;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface ExtractFindingsOutput {
  findings: AgentFinding[];
  descriptive: boolean;
  costUsd: number;
}

const findingId = (prefix: string, index: number) => `${prefix}-${String(index + 1).padStart(3, '0')}`;

export function createExtractFindings(deps: StepDeps) {
  return async function extractFindings(input: ExtractFindingsInput): Promise<ExtractFindingsOutput> {
    const { spec } = input.plan;
    const scoped = (finding: Finding): AgentFinding => ({
      finding,
      windowDays: spec.windowDays,
      ...(spec.offsetDays ? { offsetDays: spec.offsetDays } : {}),
      ...(spec.statistic ? { statistic: spec.statistic } : {}),
      ...(spec.table && spec.table !== 'daily' ? { table: spec.table } : {}),
      ...(spec.workoutType ? { workoutType: spec.workoutType } : {}),
      source: 'data_science',
    });

    const descriptive = looksDescriptive(input.question) || spec.kind === 'scalar';
    if (descriptive) {
      const finding = descriptiveFinding(findingId(input.idPrefix, 0), spec, input.result);
      return { findings: finding ? [scoped(finding)] : [], descriptive, costUsd: 0 };
    }

    const inputs = { question: input.question, spec, result: input.result, summary: input.summary };
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'ds_extract',
      inputs,
      model: deps.models.validator,
      system: EXTRACT_SYSTEM,
      memory: input.memory,
      prompt: extractUserPrompt(inputs),
      maxTokens: 1500,
    });
    const extracted = parseModelJson(response.text, extractedSchema, response.requestId);
    const traceable = allNumbers(input.result);
    const findings: AgentFinding[] = [];
    for (const item of extracted) {
      const numbers = tracedNumbers(item.numbers, traceable);
      const dropped = Object.keys(item.numbers).length - Object.keys(numbers).length;
      if (dropped > 0) log.warn('extracted numbers not in the analysis result were dropped', { dropped });
      if (Object.keys(numbers).length === 0) continue;
      const parsed = findingSchema.safeParse({
        id: findingId(input.idPrefix, findings.length),
        claim: item.claim,
        kind: item.kind,
        feature: item.feature,
        target: item.target ?? null,
        numbers,
        // A sample size is a number like any other: it must be one the code returned.
        n: Number.isInteger(item.n) && item.n! >= 0 && traceable.includes(item.n!) ? item.n : 0,
        window: item.window ?? specWindow(spec),
        unit: item.unit ?? null,
      });
      if (parsed.success) findings.push(scoped(parsed.data));
      else log.warn('an extracted finding was malformed and dropped', { error: z.prettifyError(parsed.error) });
    }
    return { findings, descriptive, costUsd: response.costUsd };
  };
}
