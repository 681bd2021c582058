/**
 * The eval's own recomputation of a Fact Sheet number, from the user's rows in Postgres. Written apart
 * from the service on purpose: it imports nothing of checks/reproduction.ts or
 * checks/statistics.ts, and reads the window from the words the Fact Sheet states ("the last 7
 * days") rather than from the plan the service executed, so an answer whose label and computation
 * disagree shows up here.
 *
 * Conventions, as the README and the analysis spec state them for the user's data: a window of N days
 * is the N calendar days ending on the last day of the user's daily data (`last − N < date ≤ last`),
 * moved back K days by an offset; missing days are left out of every statistic; a comparison with the
 * period before takes the same number of calendar days just before the window (30 days each when no
 * window is given); weekends are Saturday and Sunday; a correlation is Spearman's ρ over the days where
 * both values are present, ties ranked by their average rank; a standard deviation is the sample one.
 */
import type { Pool } from 'pg';
import { DAILY_METRICS, type DailyMetric } from '../../contracts/health-records';

const DAY_MS = 86_400_000;
const DAY_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** A user's daily data on a continuous calendar: one slot per day from the first to the last, null when absent. */
export interface DailyCalendar {
  /** YYYY-MM-DD, oldest first, every calendar day. */
  dates: string[];
  values: Record<DailyMetric, Array<number | null>>;
}

export async function readDailyCalendar(pool: Pool, userId: string): Promise<DailyCalendar> {
  const { rows } = await pool.query<Record<string, string | number | null>>(
    `SELECT to_char(date, 'YYYY-MM-DD') AS date, ${DAILY_METRICS.map((m) => `${m}::float8 AS ${m}`).join(', ')}
       FROM daily_summaries WHERE user_id = $1 ORDER BY date`,
    [userId],
  );
  const values = Object.fromEntries(
    DAILY_METRICS.map((m) => [m, [] as Array<number | null>]),
  ) as DailyCalendar['values'];
  const dates: string[] = [];
  if (rows.length === 0) return { dates, values };
  const byDate = new Map(rows.map((row) => [row.date as string, row]));
  const first = Date.parse(`${rows[0].date}T00:00:00Z`);
  const last = Date.parse(`${rows[rows.length - 1].date}T00:00:00Z`);
  for (let t = first; t <= last; t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    dates.push(date);
    const row = byDate.get(date);
    for (const metric of DAILY_METRICS) {
      const v = row?.[metric];
      values[metric].push(typeof v === 'number' && Number.isFinite(v) ? v : null);
    }
  }
  return { dates, values };
}

/** Which days a number was measured over. */
export type Window =
  | { kind: 'all' }
  | { kind: 'last'; days: number; offset: number }
  | { kind: 'since'; date: string }
  | { kind: 'ending'; days: number; date: string };

/**
 * The window a Fact Sheet label names: "all available days", "the last day", "the last 7 days",
 * "the 7 days before the last 7 days", "the days since 2026-06-01", "the last 30 days vs the 30 days
 * before" (a comparison's own window), "14 days to 2026-11-24" (a coaching anchor). Null: a label this
 * recomputation cannot place.
 */
export function parseWindowLabel(label: string): Window | null {
  const text = label
    .trim()
    .toLowerCase()
    .replace(/ vs the \d+ days before$/, '');
  if (text === 'all available days') return { kind: 'all' };
  if (text === 'the last day') return { kind: 'last', days: 1, offset: 0 };
  let m = /^the last (\d+) days$/.exec(text);
  if (m) return { kind: 'last', days: Number(m[1]), offset: 0 };
  m = /^the (\d+) days before the last (\d+) days$/.exec(text);
  if (m) return { kind: 'last', days: Number(m[1]), offset: Number(m[2]) };
  m = /^the days since (\d{4}-\d{2}-\d{2})$/.exec(text);
  if (m) return { kind: 'since', date: m[1] };
  m = /^(\d+) days to (\d{4}-\d{2}-\d{2})$/.exec(text);
  if (m) return { kind: 'ending', days: Number(m[1]), date: m[2] };
  return null;
}

/** Indices [from, to) of the calendar a window covers; `before` moves it back by its own length (the prior period). */
function windowRange(
  calendar: DailyCalendar,
  window: Window,
  periods = 1,
): { from: number; to: number; length: number } {
  const count = calendar.dates.length;
  const indexOf = (date: string) =>
    Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${calendar.dates[0]}T00:00:00Z`)) / DAY_MS);
  let to: number;
  let length: number;
  switch (window.kind) {
    case 'all':
      return { from: 0, to: count, length: count };
    case 'last':
      to = count - window.offset;
      length = window.days;
      break;
    case 'since':
      to = count;
      length = count - indexOf(window.date);
      break;
    case 'ending':
      to = indexOf(window.date) + 1;
      length = window.days;
      break;
  }
  return { from: Math.max(0, to - periods * length), to: Math.max(0, Math.min(count, to)), length };
}

const present = (xs: Array<number | null>) => xs.filter((x): x is number => x !== null);
const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

function sampleSd(xs: number[]): number | null {
  if (xs.length < 2) return null;
  const m = avg(xs)!;
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

function middle(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Ranks 1…n, tied values sharing the mean of their positions. */
function ranks(xs: number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(xs.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) out[order[k][1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

function pearson(x: number[], y: number[]): number | null {
  const [mx, my] = [avg(x), avg(y)];
  if (mx === null || my === null || x.length < 2) return null;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}

const spearmanRho = (x: number[], y: number[]) => pearson(ranks(x), ranks(y));

export interface NumberSpec {
  /** The finding's statistic as the reproduction gate names it (mean … spearman), or an anchor's `mean` / `change`. */
  statistic: string;
  feature: string;
  target: string | null;
  window: Window;
}

/**
 * Every number the spec produces, by the keys the service's findings use; a key this recomputation does
 * not know is absent. Null: the feature is not a daily column, or the window holds no day.
 */
export function recomputeNumbers(calendar: DailyCalendar, spec: NumberSpec): Record<string, number> | null {
  if (!(DAILY_METRICS as readonly string[]).includes(spec.feature)) return null;
  const column = calendar.values[spec.feature as DailyMetric];
  const out: Record<string, number | null> = {};
  const periodComparison =
    spec.statistic === 'change' || (spec.statistic === 'difference' && spec.target !== 'weekend');
  if (periodComparison) {
    // No window given: the last 30 days against the 30 before.
    const window: Window = spec.window.kind === 'all' ? { kind: 'last', days: 30, offset: 0 } : spec.window;
    const { from, to, length } = windowRange(calendar, window, 2);
    const recent = present(column.slice(Math.max(from, to - length), to));
    const prior = present(column.slice(from, Math.max(from, to - length)));
    const [r, p] = [avg(recent), avg(prior)];
    const delta = r !== null && p !== null ? r - p : null;
    Object.assign(out, {
      recent_mean: r,
      current_mean: r,
      prior_mean: p,
      previous_mean: p,
      effect: delta,
      change: delta,
      difference: delta,
      n: recent.length + prior.length,
    });
    return finite(out);
  }
  const { from, to } = windowRange(calendar, spec.window);
  if (to <= from) return null;
  const days = calendar.dates.slice(from, to);
  const xs = column.slice(from, to);
  const observed = present(xs);
  switch (spec.statistic) {
    case 'spearman': {
      if (!spec.target || !(DAILY_METRICS as readonly string[]).includes(spec.target)) return null;
      const ys = calendar.values[spec.target as DailyMetric].slice(from, to);
      const pairs = xs.flatMap((x, i) => (x !== null && ys[i] !== null ? [[x, ys[i]!] as const] : []));
      out.rho = spearmanRho(
        pairs.map((p) => p[0]),
        pairs.map((p) => p[1]),
      );
      out.n = pairs.length;
      break;
    }
    case 'difference': {
      const weekday = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay();
      const weekend = present(xs.filter((_, i) => [0, 6].includes(weekday(days[i]))));
      const weekdays = present(xs.filter((_, i) => ![0, 6].includes(weekday(days[i]))));
      const [we, wd] = [avg(weekend), avg(weekdays)];
      Object.assign(out, {
        weekend_mean: we,
        weekday_mean: wd,
        difference: we !== null && wd !== null ? we - wd : null,
        n: observed.length,
      });
      break;
    }
    case 'day_of_week': {
      const means = DAY_NAMES.map((_, d) =>
        avg(present(xs.filter((_, i) => new Date(`${days[i]}T00:00:00Z`).getUTCDay() === d))),
      );
      DAY_NAMES.forEach((name, d) => (out[`by_day_${name}`] = means[d]));
      const known = present(means);
      out.highest_mean = known.length ? Math.max(...known) : null;
      out.lowest_mean = known.length ? Math.min(...known) : null;
      out.n = observed.length;
      break;
    }
    default: {
      Object.assign(out, {
        mean: avg(observed),
        median: middle(observed),
        min: observed.length ? Math.min(...observed) : null,
        max: observed.length ? Math.max(...observed) : null,
        total: observed.reduce((a, b) => a + b, 0),
        sd: sampleSd(observed),
        count: observed.length,
        n: spec.statistic === 'latest' ? Math.min(1, observed.length) : observed.length,
        value: observed.length ? observed[observed.length - 1] : null,
      });
    }
  }
  return finite(out);
}

const finite = (out: Record<string, number | null>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(out).filter((entry): entry is [string, number] => entry[1] !== null && Number.isFinite(entry[1])),
  );

/** The fact-check's tolerance: 2 % of the reference, at least 0.05. */
export const agrees = (claimed: number, recomputed: number) =>
  Math.abs(claimed - recomputed) <= Math.max(0.02 * Math.abs(recomputed), 0.05);
