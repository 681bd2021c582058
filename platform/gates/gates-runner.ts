/**
 * What the gates bridge offers its callers (./index.ts makes one, ./tracing.ts puts a span around its
 * requests): the seven gates run on findings' series, and those series cut from a user's rows.
 */
import type { DataTable, Finding, FindingSeries, GatesOutcome } from '../../contracts/findings';
import type { BiomarkerRow, DailyRow, WorkoutRow } from '../../contracts/health-records';

/**
 * Which finding to build a series for, over the last `windowDays` calendar days (null: every day),
 * ending `offsetDays` (default 0) before the last day.
 */
export interface FindingSeriesSpec {
  finding: Finding;
  windowDays: number | null;
  offsetDays?: number;
  /** The table the finding's feature is in (absent: daily) and, for workouts, the type kept. */
  table?: DataTable;
  workoutType?: string;
}

/** The user's rows a series is cut from: a turn's snapshot as `readTurnHealthData` gives it. */
interface SeriesData {
  daily: DailyRow[];
  workouts?: WorkoutRow[];
  labs?: BiomarkerRow[];
}

interface BuiltFindingSeries {
  series: FindingSeries;
  /** The finding's feature or target when it is no column of the summary: its values are all null. */
  missingColumns: string[];
}

/** Per request: its timeout (the runner's by default), and the caller's signal to give it up. */
export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface GatesRunner {
  /**
   * Each series' gates outcome, in the order given. Data the gates cannot support (too few days, a
   * constant series, an empty window) is a rejected outcome; only a series breaking the contract throws.
   */
  run(series: FindingSeries[], options?: RequestOptions): Promise<GatesOutcome[]>;
  /**
   * Each spec's series, in the order given, from the same rows the sandbox's `summary_df` is built
   * from, so a finding may name any column the generated code saw (composite features included).
   * The rules (calendar, windows, trend halves) are in gates-py/gates/finding_series.py. Rows the
   * process cannot read (a malformed or repeated date) reject with `request_failed`.
   */
  buildSeries(data: SeriesData, specs: FindingSeriesSpec[], options?: RequestOptions): Promise<BuiltFindingSeries[]>;
  /** Stops the processes; pending, queued and later runs reject with reason `closed`. */
  close(): Promise<void>;
  /** The live Python processes' pids, busy or idle (for logs and tests). */
  readonly pids: number[];
}
