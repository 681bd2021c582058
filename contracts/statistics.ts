/**
 * What a Data Science plan computes, named in its spec beside kind / feature / target / window so that
 * what was computed can be recomputed, and which of those numbers are descriptions
 * (docs/design.md#descriptions-are-judged-by-what-they-estimate). Kept free of zod (like ./gate-names.ts),
 * so workflow code can tell a description from an inference.
 *
 * - a level (`DESCRIPTIVE_STATISTICS`): an estimate of the usual level or spread (`mean`, `median`, `sd`),
 *   or an exact record of the window (`count`, `total`, `min`, `max`, `latest`; `latest_change`: the
 *   latest value against the one before and the first, a lab's panels; `per_week` / `per_month`: the
 *   window's total over its length in weeks or months, a workouts rate);
 * - an inference: a `change` against the period before, a `difference` between groups of days or
 *   periods, the means by `day_of_week`, or a `spearman` correlation.
 *
 * gates-py/gates/descriptions.py holds the same lists (test/unit/statistics-python.test.ts keeps them equal).
 */

/** Descriptions that estimate the user's usual level or spread: a handful of days can make them up. */
export const LEVEL_ESTIMATES = ['mean', 'median', 'sd'] as const;

/** Descriptions that are exact records of the window: they estimate nothing from a sample. */
export const WINDOW_RECORDS = [
  'count',
  'total',
  'min',
  'max',
  'latest',
  'latest_change',
  'per_week',
  'per_month',
] as const;

const DESCRIPTIVE_STATISTICS = [...LEVEL_ESTIMATES, ...WINDOW_RECORDS] as const;
export const ANALYSIS_STATISTICS = [
  ...DESCRIPTIVE_STATISTICS,
  'change',
  'difference',
  'day_of_week',
  'spearman',
] as const;
export type AnalysisStatistic = (typeof ANALYSIS_STATISTICS)[number];

/** The part of a finding that says what it computed: its kind, and its plan's statistic when it has one. */
interface Computed {
  finding: { kind: 'association' | 'trend' | 'scalar' };
  statistic?: AnalysisStatistic;
}

/** What a finding computed: its plan's statistic, or its kind's default (the Investigator's tests). */
export function statisticOf({ finding, statistic }: Computed): AnalysisStatistic {
  if (statistic) return statistic;
  return finding.kind === 'association' ? 'spearman' : finding.kind === 'trend' ? 'change' : 'mean';
}

/** A description: a level of a window of the user's own data, not an inference beyond it. */
export const isDescription = (computed: Computed): boolean =>
  computed.finding.kind === 'scalar' &&
  (DESCRIPTIVE_STATISTICS as readonly AnalysisStatistic[]).includes(statisticOf(computed));
