/**
 * The Data Science agent's steps: plan, code, debug, summary and findings extraction. The
 * agent's question is read through the language layer: the rephrase rule hands it one spec sentence
 * (../language/canonical.ts), and a question in the user's own words (a reflection follow-up, a direct
 * call) is understood the way routing understood it, so what is computed is what was routed. The code
 * is real pandas (../language/analysis-code.ts) and runs in the real sandbox; the numbers that come
 * back are the data's.
 *
 * `brokenCode` makes the code step write a body that fails (a misspelt column, so a KeyError) to
 * exercise the debug loop: `first` repairs it at the first debug iteration, `always` never does, so
 * the agent ends in the "DS failed" state.
 */
import { windowLabel } from '../../../activities/agents/data-science/findings';
import type { AnalysisStatistic, FindingKind } from '../../../contracts/findings';
import { analysisCodeFor, isLabFeature } from '../language/analysis-code';
import { readSpecSentence } from '../language/canonical';
import { understand } from '../language/understand-question';
import type { DataSpec, SpecWindow } from '../language/understanding';
import type { ScriptedRule } from '../types';

type BrokenCodeMode = 'never' | 'first' | 'always';
type WrongResultMode = 'none' | 'number' | 'window';

export interface DataScienceRuleOptions {
  brokenCode?: BrokenCodeMode;
  wrongResult?: WrongResultMode;
}

/** The spec the agent's question names, or the one the language layer reads in it; null when none. */
function specOfQuestion(question: string): DataSpec | null {
  return readSpecSentence(question) ?? understand([{ role: 'user', content: question }]).spec;
}

/**
 * The production plan's kind (one of FINDING_KINDS) for a language-layer spec: a period-against-period
 * difference is measured as a trend (recent window against the one before), a weekday/weekend
 * difference or a day-of-week breakdown as a level of the feature over the window.
 */
function findingKind(spec: DataSpec): FindingKind {
  if (spec.kind === 'association') return 'association';
  if (spec.kind === 'trend' || (spec.statistic === 'difference' && spec.target === 'previous_period')) return 'trend';
  return 'scalar';
}

const DAY_MS = 86_400_000;
const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** The first day of a "since MM-DD" window: the latest such date on or before `last` (a full date stays). */
function sinceDate(since: string, last: string): string {
  if (/^\d{4}-/.test(since)) return since;
  const year = Number(last.slice(0, 4));
  return `${`${year}-${since}` <= last ? year : year - 1}-${since}`;
}

/** The last day of a calendar window: the first such date on or after its first day (a full date stays). */
function untilDate(until: string, first: string): string {
  if (/^\d{4}-/.test(until)) return until;
  const year = Number(first.slice(0, 4));
  return `${`${year}-${until}` >= first ? year : year + 1}-${until}`;
}

interface PlanWindow {
  days: number | null;
  offset: number;
  since?: string;
  until?: string;
}

/**
 * The plan's window_days, offset_days, since and until; a calendar window needs the data's last date to be
 * counted (the same count `parsePlan` makes of it, so the plan's days and its dates agree).
 */
function planWindow(window: SpecWindow, dataDays: { first: string; last: string } | null, rate = false): PlanWindow {
  if ('since' in window) {
    if (!dataDays) return { days: null, offset: 0 };
    const since = sinceDate(window.since, dataDays.last);
    const until = window.until === undefined ? undefined : untilDate(window.until, since);
    const end = until !== undefined && until < dataDays.last ? until : dataDays.last;
    return {
      days: Math.max(daysBetween(since, end) + 1, 1),
      offset: Math.max(daysBetween(end, dataDays.last), 0),
      since,
      ...(until !== undefined ? { until } : {}),
    };
  }
  // A rate needs its window's length: "all days" is every day the data covers.
  if (rate && window.days === null && dataDays)
    return { days: daysBetween(dataDays.first, dataDays.last) + 1, offset: 0 };
  return { days: window.days, offset: window.days === null ? 0 : (window.offset ?? 0) };
}

/**
 * Where the spec's feature is and what the plan calls it: a lab biomarker is the labs table's; workouts
 * are counted as `workouts`, their other statistics (and a day's workouts in an association or a trend of
 * a measure) are over the duration or the measure the question names.
 */
function planFeature(spec: DataSpec): { table: 'daily' | 'workouts' | 'labs'; feature: string } {
  if (isLabFeature(spec.feature)) return { table: 'labs', feature: spec.feature };
  if (spec.feature !== 'workouts') return { table: 'daily', feature: spec.feature };
  const counted =
    spec.statistic === 'count' ||
    (['change', 'difference', 'per_week', 'per_month'].includes(spec.statistic) && spec.measure === undefined);
  return { table: 'workouts', feature: counted ? 'workouts' : (spec.measure ?? 'duration_minutes') };
}

const readable = (column: string) => column.replace(/_/g, ' ');

function windowWords({ days, offset, since, until }: PlanWindow): string {
  if (since && until) return `the days from ${since} to ${until}`;
  if (since) return `the days since ${since}`;
  if (days === null) return 'all available days';
  return offset > 0 ? `the ${days} days ending ${offset} days before the last date` : `the last ${days} days`;
}

const SERIES_WORDS = (spec: DataSpec) =>
  spec.feature === 'workouts'
    ? `the ${spec.measure === 'distance_km' ? 'distances' : spec.measure === 'calories' ? 'calories' : 'durations'} of ${spec.workout_type ? `${spec.workout_type} ` : ''}workouts in activities_df`
    : isLabFeature(spec.feature)
      ? `the ${readable(spec.feature)} values of the lab panels in labs_df`
      : `${readable(spec.feature)} in summary_df`;

function approach(spec: DataSpec, window: string): string {
  const series = SERIES_WORDS(spec);
  switch (spec.statistic) {
    case 'spearman':
      return `Pair ${readable(spec.feature)} and ${readable(spec.target ?? '')} day by day over ${window}, drop days missing either, and compute the Spearman correlation with the number of paired days.`;
    case 'change':
    case 'difference':
      return spec.target === 'weekend'
        ? `Split ${series} over ${window} into weekend and weekday days and report both means and their difference, with the days used.`
        : `Compare ${series} over ${window} with the same length of time just before it, and report both levels, their difference and the observations used.`;
    case 'day_of_week':
      return `Group ${series} over ${window} by day of week and compute each day's mean, naming the highest and lowest day.`;
    case 'per_week':
    case 'per_month':
      return `Add up ${spec.measure ? series : `the ${spec.workout_type ? `${spec.workout_type} ` : ''}workouts in activities_df (each counts 1)`} over ${window} and divide by the window's length in ${spec.statistic === 'per_week' ? 'weeks' : 'months'}, days without a workout included.`;
    case 'latest_change':
      return `Take ${series} over ${window} and report the latest value against the one before it and the first, with their dates and the number of values.`;
    default:
      return `Take ${series} over ${window}, drop missing values, and compute its ${spec.statistic === 'sd' ? 'standard deviation' : spec.statistic} with the number of observations used.`;
  }
}

const plan: ScriptedRule<'ds_plan'> = {
  step: 'ds_plan',
  respond(req) {
    const spec = specOfQuestion(req.inputs.question);
    // Nothing the data holds answers this: a plan that computes nothing, so the agent reports no
    // numbers rather than inventing a computation.
    if (!spec) {
      return {
        text:
          '== Approach ==\nThe data has nothing that answers what is asked, so there is nothing to compute.\n' +
          '== Spec ==\nkind: scalar\nfeature: unavailable\ntarget: none\nwindow_days: all',
      };
    }
    const rate = spec.statistic === 'per_week' || spec.statistic === 'per_month';
    const window = planWindow(spec.window, req.inputs.dataDays, rate);
    const kind = findingKind(spec);
    // The language layer's statistics are the plan's: this fails to compile if they drift apart.
    const statistic: AnalysisStatistic = spec.statistic;
    const { table, feature } = planFeature(spec);
    const lines = [
      `kind: ${kind}`,
      `statistic: ${statistic}`,
      `table: ${table}`,
      `feature: ${feature}`,
      `workout_type: ${table === 'workouts' && spec.workout_type ? spec.workout_type : 'none'}`,
      `target: ${kind === 'association' ? spec.target : 'none'}`,
      `window_days: ${window.days ?? 'all'}`,
      `offset_days: ${window.offset}`,
      `since: ${window.since ?? 'none'}`,
      `until: ${window.until ?? 'none'}`,
    ];
    return {
      text: `== Approach ==\n${approach(spec, windowWords(window))}\n== Spec ==\n${lines.join('\n')}`,
    };
  },
};

const fenced = (code: string) => ({ text: `\`\`\`python\n${code}\n\`\`\`` });
/** The commonest real slip: a column name that is almost right. */
const brokenCode = (spec: DataSpec) => analysisCodeFor({ ...spec, feature: `${spec.feature}_daily` });

const indent = (code: string) =>
  code
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');

/**
 * Code that runs and returns the wrong thing: every float of the right result off by a quarter and one
 * (`number`), or the statistic of another window than the plan's (`window`: every day instead of the
 * planned window, or the last 30 days when the plan said every day).
 */
function wrongCode(spec: DataSpec, mode: Exclude<WrongResultMode, 'none'>): string {
  if (mode === 'window') {
    const wider = 'days' in spec.window && spec.window.days === null ? { days: 30 } : { days: null };
    return analysisCodeFor({ ...spec, window: wider });
  }
  return [
    'def _right():',
    indent(analysisCodeFor(spec)),
    'result = _right()',
    'return {k: (v * 1.25 + 1 if isinstance(v, float) else v) for k, v in result.items()}',
  ].join('\n');
}

function codeRule<Step extends 'ds_code' | 'ds_debug'>(
  step: Step,
  broken: boolean,
  wrongResult: WrongResultMode,
): ScriptedRule<Step> {
  return {
    step,
    respond(req) {
      const spec = specOfQuestion(req.inputs.question);
      if (!spec) return fenced('return {"computed": "nothing: no data answers this question"}');
      if (broken) return fenced(brokenCode(spec));
      return fenced(wrongResult === 'none' ? analysisCodeFor(spec) : wrongCode(spec, wrongResult));
    },
  };
}

const round = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toFixed(2))));

/** The sandbox's result when it is an object of named values; anything else names nothing. */
const resultOf = (result: unknown): Record<string, unknown> =>
  result !== null && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : {};

const summary: ScriptedRule<'ds_summary'> = {
  step: 'ds_summary',
  respond(req) {
    const result = resultOf(req.inputs.result);
    const parts = Object.entries(result)
      .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
      .map(([key, value]) => `${readable(key)} ${round(value)}`);
    return {
      text: parts.length > 0 ? `The computation found: ${parts.join(', ')}.` : 'The computation returned no numbers.',
    };
  },
};

const numberIn = (result: Record<string, unknown>, ...keys: string[]) =>
  keys.map((key) => result[key]).find((v): v is number => typeof v === 'number' && Number.isFinite(v));

/** One finding per computation, its numbers copied from the result under the keys the prompt asks for. */
const extract: ScriptedRule<'ds_extract'> = {
  step: 'ds_extract',
  respond(req) {
    const { spec } = req.inputs;
    const result = resultOf(req.inputs.result);
    const window = windowLabel(spec.windowDays, spec.offsetDays, spec.since, spec.until);
    const n = typeof result.n === 'number' ? result.n : 0;
    const rho = numberIn(result, 'rho');
    if (spec.kind === 'association' && rho !== undefined) {
      const direction = rho >= 0 ? 'higher' : 'lower';
      return {
        text: JSON.stringify([
          {
            claim: `Days with more ${spec.table === 'workouts' ? `${spec.workoutType ?? ''} workout minutes`.trim() : readable(spec.feature)} go with ${direction} ${readable(spec.target ?? '')}`,
            kind: 'association',
            feature: spec.feature,
            target: spec.target,
            numbers: { rho },
            n,
            window,
            unit: null,
          },
        ]),
      };
    }
    const effect = numberIn(result, 'change', 'difference', 'total_change');
    if (spec.kind === 'trend' && effect !== undefined) {
      // The periods' means and their difference as the effect, or a workouts count's totals under their own keys.
      const total = numberIn(result, 'total_change');
      const numbers =
        total !== undefined
          ? {
              recent_total: numberIn(result, 'recent_total'),
              prior_total: numberIn(result, 'prior_total'),
              total_change: total,
            }
          : {
              recent_mean: numberIn(result, 'recent_mean', 'current_mean'),
              prior_mean: numberIn(result, 'prior_mean', 'previous_mean'),
              effect,
            };
      const direction = effect < 0 ? 'fell' : 'rose';
      const what =
        spec.table === 'workouts'
          ? `${spec.workoutType ? `${spec.workoutType} ` : ''}${spec.feature === 'workouts' ? 'workouts' : readable(spec.feature)}`
          : readable(spec.feature);
      return {
        text: JSON.stringify([
          {
            claim: `Your ${what} ${direction} over ${window} compared with the period before`,
            kind: 'trend',
            feature: spec.feature,
            target: null,
            numbers,
            n,
            window,
            unit: null,
          },
        ]),
      };
    }
    return { text: '[]' };
  },
};

export function dataScienceRules({ brokenCode: mode = 'never', wrongResult = 'none' }: DataScienceRuleOptions = {}) {
  return {
    ds_plan: plan,
    ds_code: codeRule('ds_code', mode !== 'never', wrongResult),
    ds_debug: codeRule('ds_debug', mode === 'always', wrongResult),
    ds_summary: summary,
    ds_extract: extract,
  };
}
