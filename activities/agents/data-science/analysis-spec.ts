import type { AnalysisStatistic, DataTable, FindingKind } from '../../../contracts/findings';

/**
 * What the plan fixes before any code exists: which of the user's series the findings are computed and
 * validated on. The code, the findings' extraction and the gates all read it.
 */
export interface AnalysisSpec {
  kind: FindingKind;
  feature: string;
  /** The other column of an association; null otherwise. */
  target: string | null;
  /** Trailing window in days (a trend's recent window); null = all available days. */
  windowDays: number | null;
  /** What is computed, when the plan says (older plans and histories do not). */
  statistic?: AnalysisStatistic;
  /** Days between the window's end and the data's last day ("the week before last": 7); absent = 0. */
  offsetDays?: number;
  /** The window's first day (YYYY-MM-DD) when the question gave a date ("since June"); `windowDays` counts to it. */
  since?: string;
  /** The window's last day (YYYY-MM-DD) of a calendar window ("in October": since 10-01, until 10-31). */
  until?: string;
  /** The table the feature is in (docs/design.md#every-table-in-the-checked-path); absent: daily. */
  table?: DataTable;
  /** Workouts of this type only (`running`…); absent: every workout. */
  workoutType?: string;
}
