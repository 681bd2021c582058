/**
 * Daily, sleep and body records to contributions to a day of daily_summaries (and, for body, to the
 * profile). docs/terra-mapping.md has the same mapping as tables. Every usable record gives a contribution,
 * even one with no values, so that a provider's re-delivery of a day replaces what it said before.
 */
import {
  METRIC_SPECS,
  PROFILE_SPECS,
  SLEEP_STAGES,
  type DailyMetric,
  type DailyRow,
} from '../../../contracts/health-records';
import { sleepStagesOverrun } from '../../health-data/validate';
import { acceptedValue, dayOf, instantOf, type Key, type RecordReader } from './read';
import type { DayContribution, ProfileContribution } from './types';

type Values = Partial<Record<DailyMetric, number>>;

/** Sets `metric` from `value` when it is accepted, or notes why not under `keys`' path. */
function put(values: Values, metric: DailyMetric, value: number | undefined, reader: RecordReader, keys: Key[]) {
  if (value === undefined) return;
  const accepted = acceptedValue(metric, METRIC_SPECS[metric], value);
  if (accepted.ok) values[metric] = accepted.value;
  else reader.skips.add(reader.pathOf(keys), accepted.reason);
}

/** The day of a daily or body record: the date part of metadata.start_time as sent; null (and noted) when unusable. */
function startDay(reader: RecordReader): string | null {
  const keys = ['metadata', 'start_time'];
  const time = reader.text(keys);
  const day = time === undefined ? null : dayOf(time);
  if (day === null)
    reader.skips.add(reader.pathOf(keys), 'is missing or not an ISO 8601 date, so the record has no day');
  return day;
}

const HR_SUMMARY = ['heart_rate_data', 'summary'];
const ACTIVE = ['active_durations_data'];

export function dailyContribution(reader: RecordReader, provider: string): DayContribution | null {
  const date = startDay(reader);
  if (date === null) return null;
  const values: Values = {};
  put(values, 'steps', reader.number(['distance_data', 'steps']), reader, ['distance_data', 'steps']);
  const resting = [...HR_SUMMARY, 'resting_hr_bpm'];
  put(values, 'resting_heart_rate', reader.number(resting), reader, resting);
  // RMSSD, in ms; Terra's avg_hrv_sdnn is another measure of variability, on another scale, and is not used.
  const hrv = [...HR_SUMMARY, 'avg_hrv_rmssd'];
  put(values, 'heart_rate_variability', reader.number(hrv), reader, hrv);
  const moderate = reader.number([...ACTIVE, 'moderate_intensity_seconds']);
  const vigorous = reader.number([...ACTIVE, 'vigorous_intensity_seconds']);
  const activeKeys = [...ACTIVE, moderate === undefined ? 'vigorous_intensity_seconds' : 'moderate_intensity_seconds'];
  if (moderate !== undefined || vigorous !== undefined) {
    put(values, 'active_zone_minutes', ((moderate ?? 0) + (vigorous ?? 0)) / 60, reader, activeKeys);
  }
  return { kind: 'daily', provider, key: date, date, values };
}

const ASLEEP = ['sleep_durations_data', 'asleep'];
const AWAKE = ['sleep_durations_data', 'awake'];

/** Where each of our sleep stages is in a sleep record, in seconds. */
const STAGE_SECONDS: Record<(typeof SLEEP_STAGES)[number], string[]> = {
  deep_sleep_minutes: [...ASLEEP, 'duration_deep_sleep_state_seconds'],
  rem_sleep_minutes: [...ASLEEP, 'duration_REM_sleep_state_seconds'],
  light_sleep_minutes: [...ASLEEP, 'duration_light_sleep_state_seconds'],
  awake_minutes: [...AWAKE, 'duration_awake_state_seconds'],
};

/**
 * A sleep session counts for the day it ends on (a night counts for the morning one wakes up). Our
 * sleep_minutes is the whole night that the four stages split, awake time included (sleepStagesOverrun),
 * so it is Terra's time asleep plus its time awake.
 */
export function sleepContribution(reader: RecordReader, provider: string): DayContribution | null {
  const endKeys = ['metadata', 'end_time'];
  const end = reader.text(endKeys);
  const date = end === undefined ? null : dayOf(end);
  if (date === null) {
    reader.skips.add(reader.pathOf(endKeys), 'is missing or not an ISO 8601 time, so the session has no day');
    return null;
  }
  const key = reader.text(['metadata', 'summary_id']) ?? reader.text(['metadata', 'start_time']);
  if (key === undefined) {
    reader.skips.add(reader.pathOf(['metadata']), 'has neither summary_id nor start_time to tell the session by');
    return null;
  }
  const values: Values = {};
  const asleepKeys = [...ASLEEP, 'duration_asleep_state_seconds'];
  const asleep = reader.number(asleepKeys);
  const awake = reader.number(STAGE_SECONDS.awake_minutes);
  if (asleep !== undefined) put(values, 'sleep_minutes', (asleep + (awake ?? 0)) / 60, reader, asleepKeys);
  for (const stage of SLEEP_STAGES) {
    const seconds = reader.number(STAGE_SECONDS[stage]);
    put(values, stage, seconds === undefined ? undefined : seconds / 60, reader, STAGE_SECONDS[stage]);
  }
  if (stagesOverrun(values)) {
    for (const stage of SLEEP_STAGES) delete values[stage];
    reader.skips.add(reader.pathOf(['sleep_durations_data']), 'the sleep stages add up to more than the night');
  }
  put(values, 'sleep_score', reader.number(['scores', 'sleep']), reader, ['scores', 'sleep']);
  const nap = reader.get(['metadata', 'is_nap']) === true;
  return { kind: 'sleep', provider, key, date, values, nap };
}

/** Whether the stages overrun the night by more than the tolerance the store allows for rounding. */
export function stagesOverrun(values: Values): boolean {
  const row = { date: '', ...Object.fromEntries(SLEEP_STAGES.map((stage) => [stage, values[stage] ?? null])) };
  return sleepStagesOverrun({ ...row, sleep_minutes: values.sleep_minutes ?? null } as DailyRow) !== null;
}

/**
 * A body record: its resting heart rate as a day contribution, and each measurement with a weight or height
 * as a profile contribution. Blood pressure, glucose, temperature, body fat and the rest have no column.
 */
export function bodyContributions(
  reader: RecordReader,
  provider: string,
): { day: DayContribution | null; profile: ProfileContribution[] } {
  const date = startDay(reader);
  if (date === null) return { day: null, profile: [] };
  const values: Values = {};
  const resting = ['heart_data', 'heart_rate_data', 'summary', 'resting_hr_bpm'];
  put(values, 'resting_heart_rate', reader.number(resting), reader, resting);
  return { day: { kind: 'body', provider, key: date, date, values }, profile: measurements(reader, provider) };
}

function measurements(reader: RecordReader, provider: string): ProfileContribution[] {
  const listKeys = ['measurements_data', 'measurements'];
  const list = reader.get(listKeys);
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    reader.skips.add(reader.pathOf(listKeys), 'is not an array');
    return [];
  }
  return list.flatMap((_, i): ProfileContribution[] => {
    const at = [...listKeys, i];
    const profile: ProfileContribution = { provider, measuredAt: '' };
    for (const field of ['weight_kg', 'height_cm'] as const) {
      const value = reader.number([...at, field]);
      if (value === undefined) continue;
      const accepted = acceptedValue(field, PROFILE_SPECS[field], value);
      if (accepted.ok) profile[field] = accepted.value;
      else reader.skips.add(reader.pathOf([...at, field]), accepted.reason);
    }
    if (profile.weight_kg === undefined && profile.height_cm === undefined) return [];
    // A measurement without its own time was taken some time that day: the day's start stands in for it.
    const timeKeys =
      reader.get([...at, 'measurement_time']) === undefined ? ['metadata', 'start_time'] : [...at, 'measurement_time'];
    const time = reader.text(timeKeys);
    const instant = time === undefined ? null : instantOf(time);
    if (instant === null) {
      reader.skips.add(reader.pathOf(timeKeys), 'is not an ISO 8601 time, so the measurement is left out');
      return [];
    }
    return [{ ...profile, measuredAt: instant.iso }];
  });
}
