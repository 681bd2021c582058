/**
 * The `reproduction` gate (before the seven gates, docs/design.md#reproduction): every number a finding carries is
 * recomputed here, by our own code, from the same series of the user's rows the gates judge (cut by the
 * gates process, gates-py/gates/finding_series.py), using the finding's machine-readable spec — kind,
 * statistic, feature, target, window — and compared with the fact-check's tolerance. Model-written code
 * that averaged the wrong window, or was talked into returning 999, does not reproduce.
 *
 * Outcomes:
 * - `reproduced`: every number matched its recomputation.
 * - `mismatch`: at least one number did not; the finding is rejected (a hard gate).
 * - `unreproducible`: a number we have no recomputation for (a key the spec does not produce, a CI
 *   pair, a column the daily data does not hold); the finding is at most conditional, and says why.
 *
 * What each statistic produces, under the keys the Data Science code returns (analysis-code in the
 * scripted model, and the plan prompt's names): mean, median, min, max, total, sd, count, latest
 * (`value`); per_week / per_month (`per_week` / `per_month`, with `total` and the window's `weeks` /
 * `months`: a rate needs the finding's window in days); latest_change (`latest`, `previous`, `change`, `first`, `change_since_first`: a lab's panels);
 * change (`recent_mean`, `prior_mean`, `effect` / `change`, and the periods' sums `recent_total`,
 * `prior_total`, `total_change`: workouts counted or added up per period); a period against the one before
 * (`current_mean`, `previous_mean`, `difference`); weekends against weekdays (`weekend_mean`,
 * `weekday_mean`, `difference`); day of week (`by_day_<day>`, `highest_mean`, `lowest_mean`); spearman
 * (`rho`); and `n`, the observations used, for all of them.
 */
import type { AgentFinding, AnalysisStatistic, FindingSeries, GateResult } from '../contracts/findings';
import { statisticOf } from '../contracts/statistics';
import { mean, sampleSd, spearman } from './statistics';
import { FACT_TOLERANCE, withinTolerance } from '../contracts/fact-tolerance';

interface NumberCheck {
  key: string;
  claimed: number | [number, number];
  /** null when there is no recomputation for this key. */
  recomputed: number | null;
  reproduced: boolean;
}

export type Reproduction =
  | { status: 'reproduced'; statistic: AnalysisStatistic; checks: NumberCheck[] }
  | { status: 'mismatch'; statistic: AnalysisStatistic; checks: NumberCheck[] }
  | { status: 'unreproducible'; statistic: AnalysisStatistic; checks: NumberCheck[]; reason: string };

const DAY_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;

const observed = (values: ReadonlyArray<number | null>) => values.filter((v): v is number => v !== null);

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Each value with its calendar day of the week: from the series' own `dates`, or (a series from before they
 * were carried) by position on the calendar ending on `lastDay` (YYYY-MM-DD).
 */
function byWeekday(series: FindingSeries, lastDay: string): Array<{ day: number; value: number }> {
  const values = series.feature_values;
  const last = Date.parse(`${lastDay}T00:00:00Z`);
  const dayAt = (i: number) =>
    series.dates ? Date.parse(`${series.dates[i]}T00:00:00Z`) : last - (values.length - 1 - i) * DAY_MS;
  return values.flatMap((value, i) => (value === null ? [] : [{ day: new Date(dayAt(i)).getUTCDay(), value }]));
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** Days in a month, on average over the Gregorian calendar: a monthly rate is the daily rate times this. */
const DAYS_PER_MONTH = 365.2425 / 12;

/** The numbers the spec produces, recomputed from the series; keys absent when undefined for this data. */
function recompute(
  statistic: AnalysisStatistic,
  series: FindingSeries,
  lastDay: string,
  windowDays: number | null,
): Record<string, number> {
  const out: Record<string, number | null> = {};
  const values = series.feature_values;
  const xs = observed(values);
  switch (statistic) {
    case 'mean':
    case 'median':
    case 'min':
    case 'max':
    case 'total':
    case 'sd':
    case 'count':
    case 'latest':
    case 'latest_change':
    case 'per_week':
    case 'per_month': {
      out.n = xs.length;
      out.mean = mean(xs);
      out.median = median(xs);
      out.min = xs.length ? Math.min(...xs) : null;
      out.max = xs.length ? Math.max(...xs) : null;
      out.total = xs.reduce((a, b) => a + b, 0);
      out.sd = sampleSd(xs);
      out.count = xs.length;
      if (statistic === 'latest') {
        out.value = xs.length ? xs[xs.length - 1] : null;
        out.n = xs.length ? 1 : 0;
      }
      if ((statistic === 'per_week' || statistic === 'per_month') && windowDays !== null) {
        // A rate over the window's length, days without a workout included: that is what "per week" means.
        const weeks = windowDays / 7;
        const months = windowDays / DAYS_PER_MONTH;
        Object.assign(out, { weeks, months, per_week: out.total! / weeks, per_month: out.total! / months });
      }
      if (statistic === 'latest_change') {
        // The latest observation against the one before it and the first: what a lab's panels say.
        const [latest, previous, first] = [xs[xs.length - 1], xs[xs.length - 2], xs[0]];
        Object.assign(out, { latest, previous, first, value: latest });
        out.change = xs.length >= 2 ? latest - previous : null;
        out.change_since_first = xs.length >= 2 ? latest - first : null;
      }
      break;
    }
    case 'change':
    case 'difference': {
      if (series.recent_start !== undefined) {
        const recent = observed(values.slice(series.recent_start));
        const prior = observed(values.slice(0, series.recent_start));
        const [r, p] = [mean(recent), mean(prior)];
        const delta = r !== null && p !== null ? r - p : null;
        Object.assign(out, {
          recent_total: recent.length ? sum(recent) : null,
          prior_total: prior.length ? sum(prior) : null,
          total_change: recent.length && prior.length ? sum(recent) - sum(prior) : null,
          recent_mean: r,
          current_mean: r,
          prior_mean: p,
          previous_mean: p,
          effect: delta,
          change: delta,
          difference: delta,
          n: recent.length + prior.length,
        });
      } else {
        // Weekends against weekdays, over the window.
        const days = byWeekday(series, lastDay);
        const weekend = days.filter((d) => d.day === 0 || d.day === 6).map((d) => d.value);
        const weekday = days.filter((d) => d.day !== 0 && d.day !== 6).map((d) => d.value);
        const [we, wd] = [mean(weekend), mean(weekday)];
        Object.assign(out, {
          weekend_mean: we,
          weekday_mean: wd,
          difference: we !== null && wd !== null ? we - wd : null,
          n: xs.length,
        });
      }
      break;
    }
    case 'day_of_week': {
      const days = byWeekday(series, lastDay);
      const means = DAY_NAMES.map((name, day) => ({
        name,
        m: mean(days.filter((d) => d.day === day).map((d) => d.value)),
      }));
      for (const { name, m } of means) out[`by_day_${name}`] = m;
      const present = means.flatMap(({ m }) => (m === null ? [] : [m]));
      out.highest_mean = present.length ? Math.max(...present) : null;
      out.lowest_mean = present.length ? Math.min(...present) : null;
      out.n = xs.length;
      break;
    }
    case 'spearman': {
      const x: number[] = [];
      const y: number[] = [];
      values.forEach((a, i) => {
        const b = series.target_values?.[i] ?? null;
        if (a !== null && b !== null) {
          x.push(a);
          y.push(b);
        }
      });
      out.rho = spearman(x, y);
      out.n = x.length;
      break;
    }
  }
  return Object.fromEntries(
    Object.entries(out).filter((entry): entry is [string, number] => entry[1] !== null && Number.isFinite(entry[1])),
  );
}

/** Within the fact-check's tolerance, and of the same sign: a flipped correlation is another claim. */
const matches = (claimed: number, recomputed: number) =>
  withinTolerance(claimed, recomputed) &&
  (Math.sign(claimed) === Math.sign(recomputed) || Math.abs(recomputed) < FACT_TOLERANCE.absolute);

/**
 * Recomputes a finding's numbers from its series. `lastDay` is the last day of the series (the data's
 * last day less the window's offset), which places the series' positions on the calendar.
 */
export function reproduceFinding(
  agentFinding: Pick<AgentFinding, 'finding' | 'statistic'> & { windowDays?: number | null },
  series: FindingSeries,
  lastDay: string,
  missingColumns: readonly string[] = [],
): Reproduction {
  const statistic = statisticOf(agentFinding);
  const expected = recompute(statistic, series, lastDay, agentFinding.windowDays ?? null);
  const checks: NumberCheck[] = Object.entries(agentFinding.finding.numbers).map(([key, claimed]) => {
    const recomputed = expected[key] ?? null;
    const reproduced = typeof claimed === 'number' && recomputed !== null && matches(claimed, recomputed);
    return { key, claimed, recomputed, reproduced };
  });
  if (checks.some((c) => c.recomputed !== null && !c.reproduced)) return { status: 'mismatch', statistic, checks };
  // Nothing observed in the window: nothing to recompute a number from.
  if (expected.n === 0) return { status: 'unreproducible', statistic, checks, reason: 'no observations in the window' };
  if (missingColumns.length > 0) {
    return {
      status: 'unreproducible',
      statistic,
      checks,
      reason: `no column ${missingColumns.join(', ')} in the data`,
    };
  }
  const unknown = checks.filter((c) => c.recomputed === null).map((c) => c.key);
  if (unknown.length > 0) {
    return {
      status: 'unreproducible',
      statistic,
      checks,
      reason: `no recomputation of ${unknown.join(', ')} for a ${statistic} finding`,
    };
  }
  if (checks.length === 0) return { status: 'unreproducible', statistic, checks, reason: 'the finding has no numbers' };
  return { status: 'reproduced', statistic, checks };
}

/** The gate's result as a `validator.gate` event carries it: claimed and recomputed values side by side. */
export function reproductionGate(reproduction: Reproduction): GateResult {
  const detail = {
    statistic: reproduction.statistic,
    numbers: reproduction.checks.map(({ key, claimed, recomputed, reproduced }) => ({
      key,
      claimed,
      recomputed,
      reproduced,
    })),
  };
  if (reproduction.status === 'unreproducible') {
    return {
      gate: 'reproduction',
      verdict: 'skipped',
      detail: { applicable: false, reason: reproduction.reason, ...detail },
    };
  }
  return {
    gate: 'reproduction',
    verdict: reproduction.status === 'reproduced' ? 'passed' : 'failed',
    detail: { applicable: true, ...detail },
  };
}
