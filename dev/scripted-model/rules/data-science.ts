/**
 * The Data Science agent's steps (seed 002): plan, code, debug, summary and findings extraction, for
 * the canonical asks the rephrase rule produces (analysis-ask.ts). The code is real pandas
 * (analysis-code.ts) and runs in the real sandbox; the numbers that come back are the data's.
 *
 * `brokenCode` makes the code step write a body that fails (a misspelt column, so a KeyError) to
 * exercise the debug loop: `first` repairs it at the first debug iteration, `always` never does, so
 * the agent ends in the "DS failed" state.
 */
import type { ScriptedRule } from '../types';
import { readAnalysisAsk, readCanonicalAsk, type AnalysisAsk } from './analysis-ask';
import { analysisCode } from './analysis-code';

export type BrokenCodeMode = 'never' | 'first' | 'always';

const KIND: Record<AnalysisAsk['statistic'], 'scalar' | 'trend' | 'association'> = {
  mean: 'scalar',
  median: 'scalar',
  sd: 'scalar',
  day_of_week: 'scalar',
  change: 'trend',
  correlation: 'association',
};

const readable = (column: string) => column.replace(/_/g, ' ');

/** The agent's question, read as a canonical ask (or, failing that, as prose). */
function askOf(question: string): AnalysisAsk | null {
  return readCanonicalAsk(question) ?? readAnalysisAsk(question);
}

function approach(ask: AnalysisAsk): string {
  const window = ask.windowDays === undefined ? 'all available days' : `the last ${ask.windowDays} days`;
  switch (ask.statistic) {
    case 'correlation':
      return `Pair ${readable(ask.metric)} and ${readable(ask.other!)} day by day over ${window}, drop days missing either, and compute the Spearman correlation with the number of paired days.`;
    case 'change':
      return `Compare the mean of ${readable(ask.metric)} over the last ${ask.windowDays} days with the mean over the ${ask.windowDays} days before, and report both means, their difference and the days used.`;
    case 'day_of_week':
      return `Group ${readable(ask.metric)} over ${window} by day of week and compute each day's mean, naming the highest and lowest day.`;
    default:
      return `Take ${readable(ask.metric)} over ${window}, drop missing days, and compute its ${ask.statistic === 'sd' ? 'standard deviation' : ask.statistic} with the number of days used.`;
  }
}

const plan: ScriptedRule<'ds_plan'> = {
  step: 'ds_plan',
  respond(req) {
    const ask = askOf(req.inputs.question);
    // Nothing in the daily data answers this (a lab value, say): a plan that computes nothing, so the
    // agent reports no numbers rather than inventing a computation.
    if (!ask) {
      return {
        text:
          '== Approach ==\nThe daily data has no column for what is asked, so there is nothing to compute.\n' +
          '== Spec ==\nkind: scalar\nfeature: unavailable\ntarget: none\nwindow_days: all',
      };
    }
    const spec = [
      `kind: ${KIND[ask.statistic]}`,
      `feature: ${ask.metric}`,
      `target: ${ask.other ?? 'none'}`,
      `window_days: ${ask.windowDays ?? 'all'}`,
    ];
    return { text: `== Approach ==\n${approach(ask)}\n== Spec ==\n${spec.join('\n')}` };
  },
};

const fenced = (code: string) => ({ text: `\`\`\`python\n${code}\n\`\`\`` });
/** The commonest real slip: a column name that is almost right. */
const brokenCode = (ask: AnalysisAsk) => analysisCode({ ...ask, metric: `${ask.metric}_daily` });

function codeRule<Step extends 'ds_code' | 'ds_debug'>(step: Step, broken: boolean): ScriptedRule<Step> {
  return {
    step,
    respond(req) {
      const ask = askOf(req.inputs.question);
      if (!ask) return fenced('return {"computed": "nothing: no column in the data answers this question"}');
      return fenced(broken ? brokenCode(ask) : analysisCode(ask));
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

/** One finding per computation, its numbers copied from the result under the keys the prompt asks for. */
const extract: ScriptedRule<'ds_extract'> = {
  step: 'ds_extract',
  respond(req) {
    const { spec } = req.inputs;
    const result = resultOf(req.inputs.result);
    const window = spec.windowDays === null ? 'all available days' : `last ${spec.windowDays} days`;
    const n = typeof result.n === 'number' ? result.n : 0;
    if (spec.kind === 'association' && typeof result.rho === 'number') {
      const direction = result.rho >= 0 ? 'higher' : 'lower';
      return {
        text: JSON.stringify([
          {
            claim: `Days with more ${readable(spec.feature)} go with ${direction} ${readable(spec.target ?? '')}`,
            kind: 'association',
            feature: spec.feature,
            target: spec.target,
            numbers: { rho: result.rho },
            n,
            window,
            unit: null,
          },
        ]),
      };
    }
    if (spec.kind === 'trend' && typeof result.change === 'number') {
      const direction = result.change < 0 ? 'fell' : 'rose';
      return {
        text: JSON.stringify([
          {
            claim: `Your ${readable(spec.feature)} ${direction} over the ${window} compared with the period before`,
            kind: 'trend',
            feature: spec.feature,
            target: null,
            numbers: { recent_mean: result.recent_mean, prior_mean: result.prior_mean, effect: result.change },
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

export function dataScienceRules({ brokenCode: mode = 'never' }: { brokenCode?: BrokenCodeMode } = {}) {
  return {
    ds_plan: plan,
    ds_code: codeRule('ds_code', mode !== 'never'),
    ds_debug: codeRule('ds_debug', mode === 'always'),
    ds_summary: summary,
    ds_extract: extract,
  };
}
