/**
 * The coach's personal anchors (docs/design.md#health-coach: "reference at least one personal
 * anchor from the deterministic computeAnchors(store) blurb"): a few of the user's own numbers,
 * computed here without a model, so advice is specific to this person rather than textbook generic.
 *
 * Choices, and why:
 * - Windows are counted back from the latest day in the data, not from today, so the anchors are a
 *   pure function of the rows (replayable, testable); the window string names that day, so an old
 *   export reads as old.
 * - For each metric, the mean of the last 14 days (`<metric>_mean_14d`) and its change against the
 *   14 days before (`<metric>_change_14d`, recent minus prior). Two weeks is recent enough to coach on
 *   and long enough to smooth out weekday effects.
 * - `n` is the days with a value: in the recent window for a mean, in both windows together for a
 *   change. An anchor resting on fewer than 7 days (in either window, for a change) is skipped: a
 *   handful of nights is noise, not something to build a plan on.
 * - Values are rounded to one decimal once, here. The rounded value is what the prompt shows, what the
 *   reply is checked against and what `result.personal_anchors` stores, so a cited number matches a stored one.
 *   A change is the difference of the unrounded means, rounded once.
 */
import { withinTolerance } from '../../../checks/fact-check';
import { extractNumbers } from '../../../checks/numbers';
import { columnUnit, parseIsoDate, type DailyMetric, type DailyRow } from '../../../contracts/health-records';

export interface PersonalAnchor {
  key: string;
  label: string;
  value: number;
  unit: string | null;
  n: number;
  window: string;
}

const WINDOW_DAYS = 14;
const MIN_DAYS = 7;
const DAY_MS = 86_400_000;

/** The metrics a coach talks about, in the order the anchors are listed (the first is the fallback citation). */
const ANCHOR_METRICS: ReadonlyArray<{ metric: DailyMetric; label: string }> = [
  { metric: 'sleep_minutes', label: 'average nightly sleep' },
  { metric: 'deep_sleep_minutes', label: 'average nightly deep sleep' },
  { metric: 'steps', label: 'average daily steps' },
  { metric: 'active_zone_minutes', label: 'average daily active zone minutes' },
  { metric: 'resting_heart_rate', label: 'average resting heart rate' },
  { metric: 'heart_rate_variability', label: 'average heart rate variability' },
];

/** One decimal; `-0` becomes `0` so it prints as the number it is. */
const roundToTenth = (value: number) => Math.round(value * 10) / 10 || 0;

function dayNumber(isoDate: string): number {
  const date = parseIsoDate(isoDate);
  if (!date) throw new RangeError(`not a calendar date: ${isoDate}`);
  return date.getTime() / DAY_MS;
}

function windowValues(rows: Array<{ day: number; row: DailyRow }>, metric: DailyMetric, from: number, to: number) {
  return rows.flatMap(({ day, row }) => {
    const value = row[metric];
    return day >= from && day <= to && value !== null ? [value] : [];
  });
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

export function computeAnchors(daily: DailyRow[]): PersonalAnchor[] {
  if (daily.length === 0) return [];
  const rows = daily.map((row) => ({ day: dayNumber(row.date), row }));
  const latest = Math.max(...rows.map((r) => r.day));
  const latestDate = new Date(latest * DAY_MS).toISOString().slice(0, 10);
  const recentWindow = `${WINDOW_DAYS} days to ${latestDate}`;
  const changeWindow = `${recentWindow} vs the ${WINDOW_DAYS} days before`;

  return ANCHOR_METRICS.flatMap(({ metric, label }) => {
    const recent = windowValues(rows, metric, latest - WINDOW_DAYS + 1, latest);
    const prior = windowValues(rows, metric, latest - 2 * WINDOW_DAYS + 1, latest - WINDOW_DAYS);
    if (recent.length < MIN_DAYS) return [];
    const unit = columnUnit(metric);
    const anchors: PersonalAnchor[] = [
      {
        key: `${metric}_mean_${WINDOW_DAYS}d`,
        label,
        value: roundToTenth(mean(recent)),
        unit,
        n: recent.length,
        window: recentWindow,
      },
    ];
    if (prior.length >= MIN_DAYS) {
      anchors.push({
        key: `${metric}_change_${WINDOW_DAYS}d`,
        label: `change in ${label}, recent minus prior`,
        value: roundToTenth(mean(recent) - mean(prior)),
        unit,
        n: recent.length + prior.length,
        window: changeWindow,
      });
    }
    return anchors;
  });
}

/**
 * Keys of the anchors whose value the text states, with the fact-check's tolerance (2 %, 0.05 floor;
 * a change may be stated without its sign, "5.2 fewer minutes"). Percentages are not anchor values.
 */
export function citedAnchorKeys(text: string, anchors: PersonalAnchor[]): string[] {
  const numbers = extractNumbers(text).filter((token) => !token.isPercent);
  return anchors
    .filter((anchor) => numbers.some((token) => withinTolerance(token.value, anchor.value)))
    .map((anchor) => anchor.key);
}
