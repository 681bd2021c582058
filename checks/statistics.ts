/**
 * The little statistics our own code computes on the user's rows, in TypeScript: the Investigator's
 * tests (docs/design.md#hypothesis-investigator) and the recomputation of every Data Science number
 * (checks/reproduction.ts). No model and no sandbox, so every number is real. Conventions match the Python gates (gates-py/gates): the SD is the sample
 * SD (ddof = 1), Spearman ranks ties by their average rank, and an undefined statistic is null.
 */
import type { DailyMetric, DailyRow } from '../contracts/health-records';

const DAY_MS = 86_400_000;

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Sample SD (n − 1 in the denominator); null below two values. */
export function sampleSd(values: readonly number[]): number | null {
  const m = mean(values);
  if (m === null || values.length < 2) return null;
  return Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / (values.length - 1));
}

/** 1-based ranks in input order; tied values share the mean of the ranks they span. */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((value, index) => ({ value, index })).sort((a, b) => a.value - b.value);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && order[end + 1].value === order[start].value) end++;
    // Positions start..end (0-based) are ranks start+1..end+1; their mean is the midpoint.
    const rank = (start + end) / 2 + 1;
    for (let i = start; i <= end; i++) ranks[order[i].index] = rank;
    start = end + 1;
  }
  return ranks;
}

function pearson(x: readonly number[], y: readonly number[]): number | null {
  const mx = mean(x);
  const my = mean(y);
  if (mx === null || my === null) return null;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  const norm = Math.sqrt(sxx * syy);
  return norm === 0 ? null : Math.min(1, Math.max(-1, sxy / norm));
}

/** Spearman's ρ of paired values: Pearson's r of their average ranks. Null below two pairs or for a constant side. */
export function spearman(x: readonly number[], y: readonly number[]): number | null {
  if (x.length !== y.length) throw new RangeError(`spearman needs pairs: ${x.length} x values, ${y.length} y values`);
  if (x.length < 2) return null;
  return pearson(averageRanks(x), averageRanks(y));
}

/** The days on which both metrics have a value, as two aligned arrays. */
export function pairedValues(daily: readonly DailyRow[], feature: DailyMetric, target: DailyMetric) {
  const x: number[] = [];
  const y: number[] = [];
  for (const row of daily) {
    const a = row[feature];
    const b = row[target];
    if (a !== null && b !== null) {
      x.push(a);
      y.push(b);
    }
  }
  return { x, y };
}

export const observed = (daily: readonly DailyRow[], metric: DailyMetric): number[] =>
  daily.flatMap((row) => (row[metric] === null ? [] : [row[metric]]));

/**
 * A metric's values in the last `days` calendar days (ending at the last date of the rows) and in the
 * `days` before them: the digest's "last 30d vs prior 30d", cut like the gates' trend series
 * (gates-py/gates/finding_series.py: `date > last − N days`), so a day without a row is simply absent.
 */
export function recentAndPrior(
  daily: readonly DailyRow[],
  metric: DailyMetric,
  days: number,
): { recent: number[]; prior: number[] } {
  const recent: number[] = [];
  const prior: number[] = [];
  if (daily.length === 0) return { recent, prior };
  const last = daily.reduce((latest, row) => Math.max(latest, Date.parse(row.date)), -Infinity);
  for (const row of daily) {
    const value = row[metric];
    if (value === null) continue;
    const daysBefore = (last - Date.parse(row.date)) / DAY_MS;
    if (daysBefore < days) recent.push(value);
    else if (daysBefore < 2 * days) prior.push(value);
  }
  return { recent, prior };
}

export const roundTo = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
