/**
 * What Terra's events become on our side (docs/terra-mapping.md): contributions to a day of
 * daily_summaries, workouts and the profile, each from one provider, and what was left out and why.
 * The writer stores contributions as they come and combines them per day (./combine.ts), so a provider's
 * re-delivery replaces its own earlier word without touching another provider's.
 */
import type { DailyMetric, WorkoutRecord } from '../../../contracts/health-records';

/** What one Terra record says about one day of daily_summaries, from one provider. */
export interface DayContribution {
  kind: 'daily' | 'sleep' | 'body';
  /** Terra's provider name as sent in user.provider, e.g. 'GARMIN'. */
  provider: string;
  /** Unique per (user, provider, kind): the day for daily/body; the session's metadata.summary_id, else its metadata.start_time, for sleep. */
  key: string;
  /** YYYY-MM-DD, the day it counts for (docs/terra-mapping.md#which-day-a-record-counts-for). */
  date: string;
  /** Only the metrics the record has, within METRIC_SPECS' accepted ranges, rounded where the column is integer. */
  values: Partial<Record<DailyMetric, number>>;
  /** Sleep only: a nap, kept but never counted in a day's row. */
  nap?: boolean;
}

export interface WorkoutContribution {
  provider: string;
  /** metadata.summary_id */
  key: string;
  date: string;
  /** ISO instant (UTC) from metadata.start_time. */
  startedAt: string;
  /** ISO instant (UTC) from metadata.end_time. */
  endedAt: string;
  /** external_id is `terra:${provider}:${summary_id}` made 1-255 visible ASCII; passes workoutRowsProblem. */
  workout: WorkoutRecord;
}

export interface ProfileContribution {
  provider: string;
  /** ISO instant (UTC) of the measurement. */
  measuredAt: string;
  weight_kg?: number;
  height_cm?: number;
}

/** A field or record left out, with why: a path into the event and a reason, never a value. */
export interface SkippedField {
  path: string;
  reason: string;
}

export interface MappedTerraData {
  days: DayContribution[];
  workouts: WorkoutContribution[];
  profile: ProfileContribution[];
  skipped: SkippedField[];
}

/** The envelope itself is unusable (not an object, no data array, an unknown type); the message names paths only. */
export class TerraMappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TerraMappingError';
  }
}
