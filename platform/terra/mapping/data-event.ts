/**
 * A Terra data event (`daily`, `sleep`, `body` or `activity`) to what it contributes to our tables. The
 * envelope must be usable (else TerraMappingError); each record in `data` is mapped on its own, and what
 * cannot be used is left out with a SkippedField rather than failing the event.
 */
import { firstPositions } from '../../health-data/validate';
import { bodyContributions, dailyContribution, sleepContribution } from './days';
import { RecordReader, Skips, isObject } from './read';
import { TerraMappingError, type MappedTerraData } from './types';
import { workoutContribution } from './workouts';

const DATA_EVENT_TYPES = ['daily', 'sleep', 'body', 'activity'] as const;
type DataEventType = (typeof DATA_EVENT_TYPES)[number];

function envelope(event: unknown): { type: DataEventType; provider: string; data: unknown[] } {
  if (!isObject(event)) throw new TerraMappingError('the event is not a JSON object');
  const { type, user, data } = event;
  if (!DATA_EVENT_TYPES.includes(type as DataEventType)) {
    throw new TerraMappingError(`type is not one of ${DATA_EVENT_TYPES.join(', ')}`);
  }
  const provider = isObject(user) ? user.provider : undefined;
  if (typeof provider !== 'string' || provider.trim() === '') {
    throw new TerraMappingError('user.provider is missing or not a non-empty string');
  }
  if (!Array.isArray(data)) throw new TerraMappingError('data is missing or not an array');
  return { type: type as DataEventType, provider, data };
}

export function mapTerraDataEvent(event: unknown): MappedTerraData {
  const { type, provider, data } = envelope(event);
  const skips = new Skips();
  const mapped: MappedTerraData = { days: [], workouts: [], profile: [], skipped: skips.list };
  // A record repeating another's key in the same event would have two rows contend for one: the first is kept.
  const seen = firstPositions<string>();
  const firstOf = (key: string, path: string) => {
    const earlier = seen(key, path);
    if (earlier !== undefined)
      skips.add(path, `repeats the ${type === 'daily' || type === 'body' ? 'day' : 'session'} of ${earlier}`);
    return earlier === undefined;
  };
  for (const [i, record] of data.entries()) {
    const path = `data[${i}]`;
    if (!isObject(record) || !isObject(record.metadata)) {
      skips.add(isObject(record) ? `${path}.metadata` : path, 'is missing or not an object');
      continue;
    }
    const reader = new RecordReader(record, path, skips);
    if (type === 'activity') {
      const workout = workoutContribution(reader, provider);
      if (workout && firstOf(workout.key, path)) mapped.workouts.push(workout);
    } else if (type === 'body') {
      const { day, profile } = bodyContributions(reader, provider);
      if (day && firstOf(day.key, path)) {
        mapped.days.push(day);
        mapped.profile.push(...profile);
      }
    } else {
      const day = type === 'daily' ? dailyContribution(reader, provider) : sleepContribution(reader, provider);
      if (day && firstOf(day.key, path)) mapped.days.push(day);
    }
  }
  return mapped;
}
