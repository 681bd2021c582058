/**
 * The scripted model's reading of a data question: which statistic of which metric over which window.
 * The rephrase rule turns a user's question into one canonical narrow computation (seed 002, Step 2),
 * and later steps (the Data Science code rule) read that canonical sentence back.
 */

export type AnalysisStatistic = 'mean' | 'median' | 'sd' | 'change' | 'correlation' | 'day_of_week';

export interface AnalysisAsk {
  statistic: AnalysisStatistic;
  metric: string;
  /** Second metric of a correlation. */
  other?: string;
  /** Trailing window in days; undefined = all available data. */
  windowDays?: number;
}

/** Everyday words for the daily-summary columns, longest phrases first so "deep sleep" beats "sleep". */
const METRIC_WORDS: Array<[RegExp, string]> = [
  [/\bdeep[- ]sleep\b/, 'deep_sleep_minutes'],
  [/\brem( sleep)?\b/, 'rem_sleep_minutes'],
  [/\blight[- ]sleep\b/, 'light_sleep_minutes'],
  [/\bsleep score\b/, 'sleep_score'],
  [/\b(awake|wake) (time|minutes)\b/, 'awake_minutes'],
  [/\bresting heart rate\b|\brhr\b|\bresting hr\b/, 'resting_heart_rate'],
  [/\bheart rate variability\b|\bhrv\b/, 'heart_rate_variability'],
  [/\bstress( management)?( score)?\b/, 'stress_management_score'],
  [/\bactive zone minutes\b|\bazm\b|\bactive minutes\b/, 'active_zone_minutes'],
  [/\bsteps?\b|\bstep count\b/, 'steps'],
  [/\bsleep( duration| minutes| time)?\b|\bslept\b/, 'sleep_minutes'],
];

export const METRIC_COLUMNS = [...new Set(METRIC_WORDS.map(([, column]) => column))];

/** Metrics in the order they are mentioned. */
export function mentionedMetrics(text: string): string[] {
  const found: Array<{ at: number; column: string }> = [];
  let rest = text.toLowerCase();
  for (const [pattern, column] of METRIC_WORDS) {
    const match = pattern.exec(rest);
    if (!match) continue;
    found.push({ at: match.index, column });
    // Blank the phrase out so "deep sleep" is not also read as "sleep".
    rest = rest.slice(0, match.index) + ' '.repeat(match[0].length) + rest.slice(match.index + match[0].length);
  }
  return [...new Set(found.sort((a, b) => a.at - b.at).map((f) => f.column))];
}

const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
const WORD_NUMBERS: Record<string, number> = { a: 1, one: 1, two: 2, three: 3, four: 4, six: 6, twelve: 12 };

export function windowDays(text: string): number | undefined {
  const lower = text.toLowerCase();
  const match = /\b(?:last|past|previous)\s+(\d+|a|one|two|three|four|six|twelve)?\s*(day|week|month|year)s?\b/.exec(
    lower,
  );
  if (match) {
    const count = match[1] === undefined ? 1 : (WORD_NUMBERS[match[1]] ?? Number(match[1]));
    return count * UNIT_DAYS[match[2]];
  }
  if (/\bthis (week)\b/.test(lower)) return 7;
  if (/\bthis (month)\b/.test(lower)) return 30;
  return undefined;
}

export function readAnalysisAsk(question: string): AnalysisAsk | null {
  const text = question.toLowerCase();
  const metrics = mentionedMetrics(text);
  if (metrics.length === 0) return null;
  const window = windowDays(text);
  const [metric, other] = metrics;
  if (other && /\b(correlat\w*|relat\w*|associat\w*|affect\w*|link\w*|connect\w*|impact\w*|influenc\w*)\b/.test(text)) {
    return { statistic: 'correlation', metric, other, windowDays: window };
  }
  if (/\b(day of (the )?week|weekday|weekend|which days?)\b/.test(text))
    return { statistic: 'day_of_week', metric, windowDays: window };
  if (/\b(trend\w*|chang\w*|drop\w*|declin\w*|improv\w*|increas\w*|decreas\w*|going (up|down))\b/.test(text)) {
    return { statistic: 'change', metric, windowDays: window ?? 30 };
  }
  if (/\bmedian\b/.test(text)) return { statistic: 'median', metric, windowDays: window };
  if (/\b(variab\w*|consisten\w*|standard deviation|sd|spread)\b/.test(text) && metric !== 'heart_rate_variability') {
    return { statistic: 'sd', metric, windowDays: window };
  }
  return { statistic: 'mean', metric, windowDays: window };
}

const windowText = (days: number | undefined) => (days === undefined ? 'all available days' : `the last ${days} days`);

/** One narrow computation, phrased so the Data Science rules can read it back with `readCanonicalAsk`. */
export function canonicalQuestion(ask: AnalysisAsk): string {
  switch (ask.statistic) {
    case 'correlation':
      return `Compute the Spearman correlation between ${ask.metric} and ${ask.other} over ${windowText(ask.windowDays)}.`;
    case 'change':
      return `Compute the change in the mean of ${ask.metric} over the last ${ask.windowDays} days versus the ${ask.windowDays} days before.`;
    case 'day_of_week':
      return `Compute the mean of ${ask.metric} by day of week over ${windowText(ask.windowDays)}.`;
    case 'sd':
      return `Compute the standard deviation of ${ask.metric} over ${windowText(ask.windowDays)}.`;
    default:
      return `Compute the ${ask.statistic} of ${ask.metric} over ${windowText(ask.windowDays)}.`;
  }
}

const CANONICAL =
  /Compute the (Spearman correlation between (\w+) and (\w+)|change in the mean of (\w+)|mean of (\w+) by day of week|standard deviation of (\w+)|(mean|median) of (\w+)) over (?:the last (\d+) days|all available days)/;

export function readCanonicalAsk(text: string): AnalysisAsk | null {
  const m = CANONICAL.exec(text);
  if (!m) return null;
  const windowDaysValue = m[9] ? Number(m[9]) : undefined;
  if (m[2]) return { statistic: 'correlation', metric: m[2], other: m[3], windowDays: windowDaysValue };
  if (m[4]) return { statistic: 'change', metric: m[4], windowDays: windowDaysValue };
  if (m[5]) return { statistic: 'day_of_week', metric: m[5], windowDays: windowDaysValue };
  if (m[6]) return { statistic: 'sd', metric: m[6], windowDays: windowDaysValue };
  return { statistic: m[7] as 'mean' | 'median', metric: m[8], windowDays: windowDaysValue };
}
