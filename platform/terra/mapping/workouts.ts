/**
 * Activity records to workouts (docs/terra-mapping.md#activity). A workout is stored whole or not at all:
 * one without a usable time, id or type, or that the store's own check refuses (a session over 24 hours),
 * is left out; an optional number that is not acceptable (calories, distance, heart rate) is left out alone.
 */
import { createHash } from 'node:crypto';
import { WORKOUT_SPECS, type WorkoutRecord } from '../../../contracts/health-records';
import { workoutRowsProblem } from '../../health-data/validate';
import { TERRA_ACTIVITY_TYPES } from './activity-types';
import { acceptedValue, dayOf, instantOf, type Key, type RecordReader } from './read';
import type { WorkoutContribution } from './types';

/**
 * The day the store's check measures a workout's date against. The mapping has no clock: whether a day is
 * after today is checked where the workout is written, which knows today.
 */
const NO_LATER_THAN = '9999-12-31';

/** Where each checked field of our workout comes from, for a refusal's path. */
const SOURCE: Record<string, Key[]> = {
  date: ['metadata', 'start_time'],
  external_id: ['metadata', 'summary_id'],
  duration_minutes: ['metadata', 'end_time'],
  distance_km: ['distance_data', 'summary', 'distance_meters'],
  calories: ['calories_data', 'total_burned_calories'],
  avg_heart_rate: ['heart_rate_data', 'summary', 'avg_hr_bpm'],
};

const MAX_EXTERNAL_ID = 255;

/**
 * `terra:${provider}:${summary_id}` as an external id: 1-255 visible ASCII characters. A character that is
 * not visible ASCII, and `%` itself, is percent-encoded (UTF-8), so that two ids never become one; an id
 * still too long keeps its start and ends with a hash of the whole, for the same reason.
 */
export function terraExternalId(provider: string, summaryId: string): string {
  const encode = (text: string) =>
    Array.from(text, (ch) =>
      /^[\x21-\x24\x26-\x7E]$/.test(ch)
        ? ch
        : Array.from(Buffer.from(ch, 'utf8'), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(
            '',
          ),
    ).join('');
  const id = `terra:${encode(provider)}:${encode(summaryId)}`;
  if (id.length <= MAX_EXTERNAL_ID) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 32);
  return `${id.slice(0, MAX_EXTERNAL_ID - hash.length - 1)}~${hash}`;
}

function timeAt(reader: RecordReader, keys: Key[]) {
  const text = reader.text(keys);
  const instant = text === undefined ? null : instantOf(text);
  if (instant === null)
    reader.skips.add(reader.pathOf(keys), 'is missing or not an ISO 8601 time, so the workout is left out');
  return text === undefined || instant === null ? null : { text, ...instant };
}

/** An optional number of the workout: null when absent or not acceptable (noted). */
function optional(
  reader: RecordReader,
  field: 'distance_km' | 'calories' | 'avg_heart_rate',
  convert: (value: number) => number,
): number | null {
  const value = reader.number(SOURCE[field]);
  if (value === undefined) return null;
  const accepted = acceptedValue(field, WORKOUT_SPECS[field], convert(value));
  if (accepted.ok) return accepted.value;
  reader.skips.add(reader.pathOf(SOURCE[field]), accepted.reason);
  return null;
}

export function workoutContribution(reader: RecordReader, provider: string): WorkoutContribution | null {
  const summaryId = reader.text(SOURCE.external_id);
  if (summaryId === undefined) {
    reader.skips.add(reader.pathOf(SOURCE.external_id), 'is missing, so the workout has no id');
    return null;
  }
  const start = timeAt(reader, ['metadata', 'start_time']);
  const end = timeAt(reader, ['metadata', 'end_time']);
  if (start === null || end === null) return null;
  if (end.ms < start.ms) {
    reader.skips.add(reader.pathOf(['metadata', 'end_time']), 'is before start_time, so the workout is left out');
    return null;
  }
  const typeKeys = ['metadata', 'type'];
  const terraType = reader.get(typeKeys);
  const type = typeof terraType === 'number' ? TERRA_ACTIVITY_TYPES.get(terraType) : undefined;
  if (type === undefined) {
    reader.skips.add(reader.pathOf(typeKeys), 'activity type has no workout type in Amy');
    return null;
  }
  const workout: WorkoutRecord = {
    external_id: terraExternalId(provider, summaryId),
    // The day the workout started on, in the user's local time as sent (dayOf).
    date: dayOf(start.text) as string,
    type,
    duration_minutes: Math.max(1, Math.round((end.ms - start.ms) / 60_000)),
    // To the millimetre: meters / 1000 alone leaves binary noise (8250.4 m → 8.250399999999999 km).
    distance_km: optional(reader, 'distance_km', (meters) => Math.round(meters * 1000) / 1_000_000),
    calories: optional(reader, 'calories', (kcal) => kcal),
    avg_heart_rate: optional(reader, 'avg_heart_rate', (bpm) => bpm),
  };
  const problem = workoutRowsProblem([workout], NO_LATER_THAN);
  if (problem) {
    const field = problem.field.replace(/^rows\[0\]\./, '');
    reader.skips.add(reader.pathOf(SOURCE[field] ?? []), `${field} ${problem.message}, so the workout is left out`);
    return null;
  }
  return { provider, key: summaryId, date: workout.date, startedAt: start.iso, endedAt: end.iso, workout };
}
