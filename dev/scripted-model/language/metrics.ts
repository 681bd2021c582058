/**
 * The metrics people name and the everyday words they use for them. Each phrase maps to a feature of
 * the user's data (a daily-summary column, `workouts` with an optional type, or a lab biomarker), or
 * to something the data does not hold, so Amy can say so. Longer phrases win over the words inside
 * them ("deep sleep" over "sleep", "heart rate variability" over "heart rate").
 */
import type { DataSpec } from './understanding';

type WorkoutType = NonNullable<DataSpec['workout_type']>;

type MetricSource = 'daily' | 'workouts' | 'labs' | 'unavailable';

export interface MetricMention {
  /** The feature the spec names (`workouts` for any workout), or the everyday name of a missing metric. */
  feature: string;
  source: MetricSource;
  workoutType?: WorkoutType;
  /** Where in the normalised text the phrase starts, to order mentions as the user made them. */
  at: number;
  phrase: string;
  category?: boolean;
  /** Where every mention of this metric starts ("an exercise plan based on my recent workouts"). */
  positions: number[];
}

interface MetricWords {
  feature: string;
  source: MetricSource;
  workoutType?: WorkoutType;
  /** A kind of exercise that is no workout type of its own ("cardio"): it makes a question about workouts in general. */
  category?: boolean;
  phrases: string[];
}

const daily = (feature: string, phrases: string[]): MetricWords => ({ feature, source: 'daily', phrases });
const lab = (feature: string, phrases: string[]): MetricWords => ({ feature, source: 'labs', phrases });
const workouts = (workoutType: WorkoutType | undefined, phrases: string[]): MetricWords => ({
  feature: 'workouts',
  source: 'workouts',
  workoutType,
  phrases,
});
const missing = (name: string, phrases: string[]): MetricWords => ({ feature: name, source: 'unavailable', phrases });

const METRIC_VOCABULARY: MetricWords[] = [
  daily('deep_sleep_minutes', ['deep sleep', 'deep sleeps', 'deep phase', 'deep stage', 'slow wave sleep']),
  daily('rem_sleep_minutes', ['rem sleep', 'rem', 'dream sleep', 'dreaming sleep']),
  daily('light_sleep_minutes', ['light sleep', 'light stage']),
  daily('awake_minutes', [
    'awake time',
    'time awake',
    'awake minutes',
    'minutes awake',
    'time spent awake',
    'awake during the night',
    'awake at night',
    'wake ups',
    'wakeups',
    'waking up at night',
    'wake up at night',
    'woke up',
    'restless',
    'restlessness',
    'awake',
  ]),
  daily('sleep_score', [
    'sleep better',
    'sleeping better',
    'better sleep',
    'improve my nights',
    'my nights',
    'sleep score',
    'sleep scores',
    'sleep quality score',
    'sleep quality',
    'quality of my sleep',
  ]),
  daily('heart_rate_variability', [
    'heart rate variability',
    'heart rate variation',
    'heart variability',
    'hrv',
    'variability of my heart',
  ]),
  daily('resting_heart_rate', [
    'resting heart rate',
    'resting heartrate',
    'resting heart beat',
    'resting heartbeat',
    'resting pulse',
    'resting rate',
    'rhr',
    'heart rate',
    'heartrate',
    'heart beat',
    'heartbeat',
    'pulse',
  ]),
  daily('stress_management_score', [
    'stress management score',
    'stress management',
    'stress score',
    'stress scores',
    'stress levels',
    'stress level',
    'stressed',
    'stress',
  ]),
  daily('active_zone_minutes', [
    'active zone minutes',
    'active zone minute',
    'zone minutes',
    'azm',
    'active minutes',
    'exercise minutes',
    'minutes of exercise',
    'cardio minutes',
    'intense minutes',
    'intensity minutes',
    'vigorous minutes',
    'minutes of activity',
    'active zone',
    'heart rate zones',
    'heart rate zone',
    'hr zones',
    'time in zones',
  ]),
  workouts('running', ['runs', 'running', 'jogging', 'jogs', 'ran', 'run']),
  workouts('cycling', [
    'bike rides',
    'rides',
    'ride',
    'rode',
    'cycling',
    'biking',
    'biked',
    'cycled',
    'i cycle',
    'bike',
    'cycle rides',
  ]),
  workouts('swimming', ['swims', 'swimming', 'swam', 'swim']),
  workouts('yoga', ['yoga sessions', 'yoga classes', 'yoga']),
  workouts('strength', [
    'strength training',
    'strength sessions',
    'strength workouts',
    'weight training',
    'weightlifting',
    'lifting',
    'gym sessions',
    'strength',
  ]),
  workouts('HIIT', ['hiit', 'interval training', 'intervals']),
  { feature: 'workouts', source: 'workouts', category: true, phrases: ['cardio', 'aerobic exercise', 'aerobic'] },
  workouts('walking', ['walks', 'walking workouts', 'longest walk', 'shortest walk', 'a walk', 'my walk']),
  workouts(undefined, [
    'workouts',
    'workout',
    'training sessions',
    'exercise sessions',
    'sessions',
    'trainings',
    'training',
    'exercised',
    'exercise',
    'exercising',
    'work out',
    'worked out',
    'working out',
  ]),
  daily('sleep_minutes', [
    'sleep duration',
    'hours of sleep',
    'hours of sleeping',
    'minutes of sleep',
    'time asleep',
    'time sleeping',
    'total sleep',
    'sleep time',
    'sleep',
    'sleeping',
    'slept',
    'asleep',
    'bedtime',
    'bed time',
  ]),
  daily('steps', [
    'step count',
    'step counts',
    'steps',
    'step',
    'footsteps',
    'walking',
    'walked',
    'walk',
    'how active',
    'activity level',
    'activity',
    'moving',
    'move',
    'moved',
  ]),
  lab('ldl_cholesterol', ['ldl cholesterol', 'ldl', 'bad cholesterol']),
  lab('hdl_cholesterol', ['hdl cholesterol', 'hdl', 'good cholesterol']),
  lab('triglycerides', ['triglycerides', 'triglyceride', 'trigs']),
  lab('total_cholesterol', ['total cholesterol', 'cholesterol', 'lipids', 'lipid panel']),
  lab('hba1c', ['hemoglobin a1c', 'hba1c', 'a1c', 'hb a1c', 'glycated hemoglobin']),
  lab('fasting_glucose', ['fasting glucose', 'blood glucose', 'blood sugar', 'glucose', 'sugar levels', 'sugar level']),
  lab('ferritin', ['ferritin', 'iron stores', 'iron levels', 'iron level', 'iron']),
  lab('vitamin_d', ['vitamin d', 'vit d', 'vitamin d3']),
  lab('tsh', ['tsh', 'thyroid stimulating hormone', 'thyroid levels', 'thyroid']),
  lab('hs_crp', ['hs crp', 'hscrp', 'crp', 'c reactive protein', 'inflammation markers', 'inflammation']),
  missing('blood pressure', ['blood pressure', 'bp', 'systolic', 'diastolic', 'hypertension readings']),
  missing('body fat', ['body fat percentage', 'body fat', 'fat percentage']),
  missing('weight', ['weight', 'body weight', 'weigh', 'bmi', 'body mass']),
  missing('VO2 max', ['vo2 max', 'vo2max', 'vo2', 'cardio fitness score', 'fitness age']),
  missing('calories eaten', [
    'calories eaten',
    'calories i eat',
    'calories i ate',
    'calorie intake',
    'calories',
    'calorie',
    'kcal',
    'macros',
  ]),
  missing('blood oxygen', ['blood oxygen', 'spo2', 'oxygen saturation', 'oxygen levels', 'oxygen level', 'o2']),
  missing('body temperature', ['body temperature', 'skin temperature', 'temperature', 'temp']),
  missing('menstrual cycle', [
    'menstrual cycle',
    'menstrual',
    'ovulation',
    'my period',
    'my periods',
    'next period',
    'period due',
    'period tracking',
  ]),
  missing('water intake', ['water intake', 'hydration', 'water']),
  missing('caffeine', ['caffeine', 'coffee']),
  missing('alcohol', ['alcohol', 'drinks', 'drinking']),
  missing('glucose monitor readings', ['cgm', 'continuous glucose']),
];

/**
 * Everyday verbs that stand for a metric (understanding.ts): how well I sleep → sleep_score, how hard I
 * train → active_zone_minutes (how much I walk / move, how long I sleep, how stressed I am and how much I
 * work out are read by the words above). Their words are known words, never what a misspelling is
 * repaired to ("will" is not "well").
 */
const EVERYDAY_VERBS: MetricWords[] = [
  daily('sleep_score', [
    'how well i sleep',
    'how well i slept',
    'how well i am sleeping',
    'how well i have been sleeping',
    'how good my sleep is',
    'sleep well',
    'slept well',
    'sleeping well',
    'sleep worse',
    'slept better',
    'slept worse',
    'sleeping worse',
  ]),
  daily('active_zone_minutes', [
    'how hard i train',
    'how hard i exercise',
    'how hard i work out',
    'how hard i workout',
    'how hard i push myself',
    'how hard i am training',
    'how hard i have been training',
    'how hard i have been exercising',
    'how intensely i train',
    'how intensely i exercise',
    'train hard',
    'train harder',
    'training hard',
    'exercise hard',
    'exercise harder',
  ]),
];

/** Phrases that hold a metric word but name no metric: "sleep apnoea" is a condition, "sleep data" all of it. */
const NOT_A_METRIC = [
  'sleep stages',
  'sleep apnea',
  'sleep apnoea',
  'step data',
  'workout data',
  'heart data',
  'walk me through',
  'work from home',
  'at work',
  'to work',
  'before work',
  'after work',
];

/** "my sleep data": all of a metric's data, read as that metric only when no more precise one is named. */
const ALL_OF_A_METRIC: Record<string, string> = {
  'sleep data': 'sleep_minutes',
  'sleep tracking': 'sleep_minutes',
  'step data': 'steps',
  'activity data': 'steps',
  'workout data': 'workouts',
};

/** The lab biomarkers: a handful of tests each, described by their latest value or how it changed across them. */
export const LAB_FEATURES: ReadonlySet<string> = new Set(
  METRIC_VOCABULARY.filter((words) => words.source === 'labs').map((words) => words.feature),
);

/** Calorie words that, said of a workout, are the calories it burned. */
const WORKOUT_CALORIES = ['calories', 'calorie', 'kcal'];
/** Calories eaten, whatever workout is named with them ("how many calories did I eat on days I ran?"). */
const EATING = / (?:eat|eats|ate|eaten|eating|intake|consume|consumed|food|diet) /;
const BURNING = / (?:burn|burns|burned|burnt|burning|spent|expended|expenditure) /;
/** The everyday name of a day's calories burned, which the data does not hold (only each workout's). */
export const CALORIES_BURNED = 'daily calories burned';

const wordsOf = (vocabulary: MetricWords[]) =>
  new Set(vocabulary.flatMap(({ phrases }) => phrases.flatMap((phrase) => phrase.split(' '))));

/** Every word of every metric phrase: what the spelling repair may repair to and never repairs away from. */
export const METRIC_WORDS: ReadonlySet<string> = wordsOf(METRIC_VOCABULARY);

/** The words of the everyday verbs: never repaired away from, never repaired to. */
export const EVERYDAY_WORDS: ReadonlySet<string> = wordsOf(EVERYDAY_VERBS);

/**
 * The metrics a normalised message names, in the order it names them, each once. A phrase is blanked
 * once matched, so the words inside it ("sleep" in "deep sleep") are not read again.
 */
export function mentionedMetrics(text: string): MetricMention[] {
  let rest = text;
  for (const phrase of [...NOT_A_METRIC, ...Object.keys(ALL_OF_A_METRIC)]) {
    rest = rest.split(` ${phrase} `).join(` ${'_'.repeat(phrase.length)} `);
  }
  // "my longest walk", "a walk": walk as a noun is a walking workout; as a verb ("did I walk") it is steps.
  rest = rest.replace(/ (a|my|longest|shortest|each|per|every|one|last) walk /g, ' $1 walks ');
  const found: MetricMention[] = [];
  const phrases = [...METRIC_VOCABULARY, ...EVERYDAY_VERBS]
    .flatMap((words) => words.phrases.map((phrase) => ({ phrase, words })))
    .sort((a, b) => b.phrase.length - a.phrase.length);
  for (const { phrase, words } of phrases) {
    let at = rest.indexOf(` ${phrase} `);
    while (at !== -1) {
      found.push({
        feature: words.feature,
        source: words.source,
        workoutType: words.workoutType,
        category: words.category,
        at,
        phrase,
        positions: [at],
      });
      rest = rest.slice(0, at + 1) + '_'.repeat(phrase.length) + rest.slice(at + 1 + phrase.length);
      at = rest.indexOf(` ${phrase} `);
    }
  }
  // "my sleep data" names sleep only when nothing more precise is named ("…sleep data, my nights").
  if (found.length === 0) {
    for (const [phrase, feature] of Object.entries(ALL_OF_A_METRIC)) {
      const at = text.indexOf(` ${phrase} `);
      if (at !== -1)
        found.push({ feature, source: feature === 'workouts' ? 'workouts' : 'daily', at, phrase, positions: [at] });
    }
  }
  // "the calories I burned on my runs": calories a workout spent are a measure of the workouts, not calories
  // eaten; burned with no workout named ("how many calories did I burn today?") they are a day's, which the
  // data does not hold (a follow-up about workouts reads them as the workouts' measure).
  const workoutsNamed = found.some((m) => m.source === 'workouts');
  const burned = !EATING.test(text) && (workoutsNamed || BURNING.test(text));
  const ordered = found
    .filter((m) => !(burned && workoutsNamed && m.feature === 'calories eaten' && WORKOUT_CALORIES.includes(m.phrase)))
    .map((m) =>
      burned && m.feature === 'calories eaten' && WORKOUT_CALORIES.includes(m.phrase)
        ? { ...m, feature: CALORIES_BURNED }
        : m,
    )
    .sort((a, b) => a.at - b.at);
  const first = new Map<string, MetricMention>();
  for (const mention of ordered) {
    const key = `${mention.feature}:${mention.workoutType ?? ''}:${mention.category ? 'category' : ''}`;
    const earlier = first.get(key);
    if (earlier) earlier.positions.push(mention.at);
    else first.set(key, mention);
  }
  return [...first.values()];
}

/** What the demo and imported data hold, in words, for a reply about a metric that is not there. */
export const AVAILABLE_IN_WORDS =
  'steps, sleep (duration, deep, REM, light, time awake and sleep score), resting heart rate, HRV, stress, active zone minutes, workouts by type, and your lab results (cholesterol, blood sugar, ferritin, vitamin D, thyroid, CRP)';
