/**
 * The one narrow computation the rephrase step hands the Data Science agent
 * (docs/design.md#step-2-rephrase), as a plain sentence a model or a person can read
 * ("Compute the mean of deep_sleep_minutes over the last 30 days.", "Compute the weekly rate of running workouts
 * over the last 90 days.") and `readSpecSentence` reads back exactly:
 * the rephrase and Data Science rules pass a spec through the conversation without losing any of it.
 */
import type { DataSpec, SpecStatistic, SpecWindow } from './understanding';

const STATISTIC_WORDS: Record<
  Exclude<SpecStatistic, 'spearman' | 'difference' | 'change' | 'day_of_week' | 'latest_change'>,
  string
> = {
  mean: 'mean',
  median: 'median',
  min: 'minimum',
  max: 'maximum',
  total: 'total',
  sd: 'standard deviation',
  count: 'count',
  latest: 'latest value',
  per_week: 'weekly rate',
  per_month: 'monthly rate',
};

function windowWords(window: SpecWindow): string {
  if ('since' in window)
    return window.until ? `the days from ${window.since} to ${window.until}` : `the days since ${window.since}`;
  if (window.days === null) return 'all available days';
  if (window.offset) return `the ${window.days} days before the last ${window.offset} days`;
  return `the last ${window.days} days`;
}

/** A calendar date of a window: `MM-DD`, or `YYYY-MM-DD` when the question named the year. */
const DATE = '((?:\\d{4}-)?\\d{2}-\\d{2})';

function readWindow(words: string): SpecWindow | null {
  if (words === 'all available days') return { days: null };
  let m = new RegExp(`^the days since ${DATE}$`).exec(words);
  if (m) return { since: m[1] };
  m = new RegExp(`^the days from ${DATE} to ${DATE}$`).exec(words);
  if (m) return { since: m[1], until: m[2] };
  m = /^the (\d+) days before the last (\d+) days$/.exec(words);
  if (m) return { days: Number(m[1]), offset: Number(m[2]) };
  m = /^the last (\d+) days$/.exec(words);
  if (m) return { days: Number(m[1]) };
  return null;
}

/** "running workouts", "distance_km of running workouts" (a measure other than the duration), or the column. */
function featureWords(spec: DataSpec, feature = spec.feature): string {
  if (feature !== 'workouts') return feature;
  const workouts = `${spec.workout_type ? `${spec.workout_type} ` : ''}workouts`;
  return spec.measure ? `${spec.measure} of ${workouts}` : workouts;
}

/** "Compute the … over …." for a spec. */
export function specSentence(spec: DataSpec): string {
  const over = `over ${windowWords(spec.window)}`;
  const feature = featureWords(spec);
  switch (spec.statistic) {
    case 'spearman':
      return `Compute the Spearman correlation between ${feature} and ${spec.target === 'workouts' ? featureWords(spec, spec.target) : spec.target} ${over}.`;
    case 'change':
      return `Compute the change in ${feature} ${over} against the same length of time before it.`;
    case 'latest_change':
      return `Compute the change in ${feature} from the previous value to the latest ${over}.`;
    case 'day_of_week':
      return `Compute the mean of ${feature} by day of week ${over}.`;
    case 'difference':
      return spec.target === 'weekend'
        ? `Compute the difference in ${feature} between weekends and weekdays ${over}.`
        : `Compute the difference in ${feature} between ${windowWords(spec.window)} and the same length of time before it.`;
    default:
      return `Compute the ${STATISTIC_WORDS[spec.statistic]} of ${feature} ${over}.`;
  }
}

const KIND_OF: Record<SpecStatistic, DataSpec['kind']> = {
  mean: 'description',
  median: 'description',
  min: 'description',
  max: 'description',
  total: 'description',
  sd: 'description',
  count: 'description',
  latest: 'description',
  latest_change: 'description',
  per_week: 'description',
  per_month: 'description',
  change: 'trend',
  difference: 'comparison',
  day_of_week: 'comparison',
  spearman: 'association',
};

const WORKOUT_TYPES = ['running', 'cycling', 'strength', 'yoga', 'walking', 'swimming', 'HIIT'] as const;

const MEASURES = ['distance_km', 'calories', 'duration_minutes'] as const;

function readFeature(words: string): Pick<DataSpec, 'feature' | 'workout_type' | 'measure'> | null {
  const measured = /^(\S+) of (.+)$/.exec(words);
  if (measured) {
    const measure = MEASURES.find((m) => m === measured[1]);
    const workouts = readFeature(measured[2]);
    return measure && workouts?.feature === 'workouts' && !workouts.measure ? { ...workouts, measure } : null;
  }
  if (words === 'workouts') return { feature: 'workouts' };
  const m = /^(\S+) workouts$/.exec(words);
  if (m) {
    const type = WORKOUT_TYPES.find((t) => t === m[1]);
    return type ? { feature: 'workouts', workout_type: type } : null;
  }
  return /^[a-z_0-9]+$/.test(words) ? { feature: words } : null;
}

function build(
  statistic: SpecStatistic,
  featureText: string,
  target: string | null,
  window: SpecWindow | null,
): DataSpec | null {
  const feature = readFeature(featureText);
  if (!feature || !window) return null;
  const spec: DataSpec = { kind: KIND_OF[statistic], statistic, feature: feature.feature, target, window };
  if (feature.workout_type) spec.workout_type = feature.workout_type;
  if (feature.measure) spec.measure = feature.measure;
  return spec;
}

/** The spec a sentence from `specSentence` names, found anywhere in a text; null when there is none. */
export function readSpecSentence(text: string): DataSpec | null {
  let m = /Compute the Spearman correlation between (.+?) and (.+?) over (.+?)\./.exec(text);
  if (m) {
    // The workout type (and measure) of an association is on whichever of its two metrics is workouts.
    const [feature, target] = [readFeature(m[1]), readFeature(m[2])];
    const spec = feature && target ? build('spearman', feature.feature, target.feature, readWindow(m[3])) : null;
    const workouts = feature?.feature === 'workouts' ? feature : target;
    if (spec && workouts?.workout_type) spec.workout_type = workouts.workout_type;
    if (spec && workouts?.measure) spec.measure = workouts.measure;
    return spec;
  }
  m = /Compute the change in (.+?) from the previous value to the latest over (.+?)\./.exec(text);
  if (m) return build('latest_change', m[1], null, readWindow(m[2]));
  m = /Compute the change in (.+?) over (.+?) against the same length of time before it\./.exec(text);
  if (m) return build('change', m[1], null, readWindow(m[2]));
  m = /Compute the mean of (.+?) by day of week over (.+?)\./.exec(text);
  if (m) return build('day_of_week', m[1], null, readWindow(m[2]));
  m = /Compute the difference in (.+?) between weekends and weekdays over (.+?)\./.exec(text);
  if (m) return build('difference', m[1], 'weekend', readWindow(m[2]));
  m = /Compute the difference in (.+?) between (.+?) and the same length of time before it\./.exec(text);
  if (m) return build('difference', m[1], 'previous_period', readWindow(m[2]));
  m =
    /Compute the (mean|median|minimum|maximum|total|standard deviation|count|latest value|weekly rate|monthly rate) of (.+?) over (.+?)\./.exec(
      text,
    );
  if (m) {
    const statistic = (Object.entries(STATISTIC_WORDS).find(([, words]) => words === m![1])?.[0] ??
      'mean') as SpecStatistic;
    return build(statistic, m[2], null, readWindow(m[3]));
  }
  return null;
}
