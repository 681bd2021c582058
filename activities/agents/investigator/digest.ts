/**
 * The Investigator's digest (docs/design.md#hypothesis-investigator): a compact description of the
 * user's data, a pure function of their rows, that the hypotheses prompt is built on. It states what
 * moved (last 30 days vs the 30 before, in SD units), how sleep varies by weekday, how complete the
 * data is and what the user trains, in roughly 500–1500 tokens.
 */
import { METRIC_SPECS, type DailyMetric, type DailyRow, type WorkoutRow } from '../../../contracts/health-records';
import { mean, observed, recentAndPrior, roundTo, sampleSd } from '../../../checks/statistics';

const DIGEST_METRICS = [
  'steps',
  'sleep_minutes',
  'deep_sleep_minutes',
  'rem_sleep_minutes',
  'resting_heart_rate',
  'heart_rate_variability',
  'stress_management_score',
  'active_zone_minutes',
  'sleep_score',
] as const satisfies readonly DailyMetric[];

/** The recent window, and the length of the prior window it is compared with. */
const DIGEST_WINDOW_DAYS = 30;
const PRESENCE_METRICS = ['heart_rate_variability', 'steps'] as const satisfies readonly DailyMetric[];
const TOP_WORKOUT_TYPES = 10;
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const DAY_MS = 86_400_000;

interface MetricDigest {
  metric: DailyMetric;
  recentMean: number | null;
  nRecent: number;
  priorMean: number | null;
  nPrior: number;
  /** Over every day with a value. */
  mean: number | null;
  sd: number | null;
  n: number;
  /** (recent − prior) / sd: null when either window is empty or the SD is undefined or 0. */
  deltaSd: number | null;
}

interface WeekdaySleep {
  weekday: (typeof WEEKDAYS)[number];
  meanSleepMinutes: number | null;
  n: number;
}

interface MetricPresence {
  metric: DailyMetric;
  present: number;
  /** Calendar days from the first row to the last: a day without a row counts as missing. */
  days: number;
  ratio: number;
}

interface WorkoutTypeSummary {
  type: string;
  sessions: number;
  meanMinutes: number;
}

export interface HealthDigest {
  firstDate: string | null;
  lastDate: string | null;
  days: number;
  metrics: MetricDigest[];
  sleepByWeekday: WeekdaySleep[];
  presence: MetricPresence[];
  workouts: number;
  topWorkoutTypes: WorkoutTypeSummary[];
}

function metricDigest(daily: readonly DailyRow[], metric: DailyMetric): MetricDigest {
  const values = observed(daily, metric);
  const { recent, prior } = recentAndPrior(daily, metric, DIGEST_WINDOW_DAYS);
  const recentMean = mean(recent);
  const priorMean = mean(prior);
  const sd = sampleSd(values);
  return {
    metric,
    recentMean,
    nRecent: recent.length,
    priorMean,
    nPrior: prior.length,
    mean: mean(values),
    sd,
    n: values.length,
    deltaSd: recentMean !== null && priorMean !== null && sd ? (recentMean - priorMean) / sd : null,
  };
}

/** Monday-first, by the weekday of the row's date. */
function sleepByWeekday(daily: readonly DailyRow[]): WeekdaySleep[] {
  const byDay: number[][] = WEEKDAYS.map(() => []);
  for (const row of daily) {
    if (row.sleep_minutes === null) continue;
    byDay[(new Date(`${row.date}T00:00:00Z`).getUTCDay() + 6) % 7].push(row.sleep_minutes);
  }
  return WEEKDAYS.map((weekday, i) => ({ weekday, meanSleepMinutes: mean(byDay[i]), n: byDay[i].length }));
}

function topWorkoutTypes(workouts: readonly WorkoutRow[]): WorkoutTypeSummary[] {
  const byType = new Map<string, number[]>();
  for (const w of workouts) byType.set(w.type, [...(byType.get(w.type) ?? []), w.duration_minutes]);
  return [...byType]
    .map(([type, minutes]) => ({ type, sessions: minutes.length, meanMinutes: mean(minutes) ?? 0 }))
    .sort((a, b) => b.sessions - a.sessions || a.type.localeCompare(b.type))
    .slice(0, TOP_WORKOUT_TYPES);
}

export function computeDigest(daily: readonly DailyRow[], workouts: readonly WorkoutRow[]): HealthDigest {
  const times = daily.map((row) => Date.parse(row.date));
  const first = times.length > 0 ? times.reduce((a, b) => Math.min(a, b)) : null;
  const last = times.length > 0 ? times.reduce((a, b) => Math.max(a, b)) : null;
  const days = first !== null && last !== null ? Math.round((last - first) / DAY_MS) + 1 : 0;
  return {
    firstDate: first === null ? null : new Date(first).toISOString().slice(0, 10),
    lastDate: last === null ? null : new Date(last).toISOString().slice(0, 10),
    days,
    metrics: DIGEST_METRICS.map((metric) => metricDigest(daily, metric)),
    sleepByWeekday: sleepByWeekday(daily),
    presence: PRESENCE_METRICS.map((metric) => {
      const present = observed(daily, metric).length;
      return { metric, present, days, ratio: days === 0 ? 0 : present / days };
    }),
    workouts: workouts.length,
    topWorkoutTypes: topWorkoutTypes(workouts),
  };
}

const one = (value: number | null) => (value === null ? 'n/a' : String(roundTo(value, 1)));
const signed = (value: number | null) =>
  value === null ? 'n/a' : `${value >= 0 ? '+' : ''}${roundTo(value, 2).toFixed(2)}`;

function metricLine(m: MetricDigest): string {
  const unit = METRIC_SPECS[m.metric].unit;
  if (m.n === 0) return `- ${m.metric} (${unit}): no data`;
  return (
    `- ${m.metric} (${unit}): last ${DIGEST_WINDOW_DAYS}d ${one(m.recentMean)} (n=${m.nRecent})` +
    ` vs prior ${DIGEST_WINDOW_DAYS}d ${one(m.priorMean)} (n=${m.nPrior});` +
    ` overall ${one(m.mean)} ± ${one(m.sd)} (n=${m.n}); change ${signed(m.deltaSd)} SD`
  );
}

/** The digest as the hypotheses prompt shows it, one fact per line under a few headings. */
export function renderDigest(digest: HealthDigest): string {
  if (digest.days === 0) return 'No daily data.';
  const lines = [
    `Period: ${digest.firstDate} to ${digest.lastDate} (${digest.days} days), ${digest.workouts} workouts.`,
    `Metrics (mean of the last ${DIGEST_WINDOW_DAYS} days vs the ${DIGEST_WINDOW_DAYS} days before; mean ± SD over all days; change in SD units):`,
    ...digest.metrics.map(metricLine),
    'Sleep minutes by day of week:',
    ...digest.sleepByWeekday.map((d) => `- ${d.weekday}: ${one(d.meanSleepMinutes)} (n=${d.n})`),
    'Data presence (days with a value / days in the period):',
    ...digest.presence.map((p) => `- ${p.metric}: ${p.present}/${p.days} (${roundTo(p.ratio, 2).toFixed(2)})`),
    `Top workout types (sessions, mean duration):`,
    ...(digest.topWorkoutTypes.length === 0
      ? ['- none recorded']
      : digest.topWorkoutTypes.map((w) => `- ${w.type}: ${w.sessions} sessions, ${one(w.meanMinutes)} min`)),
  ];
  return lines.join('\n');
}
