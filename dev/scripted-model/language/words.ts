/**
 * A message as a list of words the rest of the language layer can match phrases against: lower case,
 * contractions expanded, punctuation dropped, and misspellings of the words the layer knows repaired
 * ("avrage" → "average", "slep" → "sleep"). Matching is on whole words, so "rem" never matches "remember".
 */
import { ownValue } from '../../../contracts/own-keys';

const CONTRACTIONS: Array<[RegExp, string]> = [
  [/\bwon't\b/g, 'will not'],
  [/\bcan't\b/g, 'can not'],
  [/\bcannot\b/g, 'can not'],
  [/n't\b/g, ' not'],
  [/'re\b/g, ' are'],
  [/'ve\b/g, ' have'],
  [/'ll\b/g, ' will'],
  [/'d\b/g, ' would'],
  [/\bi'm\b/g, 'i am'],
  [/\b(it|that|what|how|there|here|who|where|when|why|which)'s\b/g, '$1 is'],
  [/'s\b/g, ''],
];

/** Spelling variants and shorthand people type, to the one form the vocabulary uses. */
const SPELLINGS: Record<string, string> = {
  whats: 'what is',
  hows: 'how is',
  wheres: 'where is',
  thats: 'that is',
  im: 'i am',
  ive: 'i have',
  dont: 'do not',
  doesnt: 'does not',
  didnt: 'did not',
  isnt: 'is not',
  wasnt: 'was not',
  arent: 'are not',
  havent: 'have not',
  cant: 'can not',
  wont: 'will not',
  shouldnt: 'should not',
  avg: 'average',
  ave: 'average',
  hr: 'heart rate',
  hrs: 'hours',
  mins: 'minutes',
  wk: 'week',
  wks: 'weeks',
  mo: 'month',
  mos: 'months',
  mth: 'month',
  yr: 'year',
  yrs: 'years',
  pls: 'please',
  plz: 'please',
  u: 'you',
  ur: 'your',
  r: 'are',
  w: 'with',
  vs: 'versus',
  v: 'versus',
  compared: 'compare',
  haemoglobin: 'hemoglobin',
  analyse: 'analyze',
  behaviour: 'behavior',
  programme: 'program',
  weekdays: 'weekday',
  weekends: 'weekend',
  workdays: 'weekday',
  workday: 'weekday',
  nites: 'nights',
  nite: 'night',
  thru: 'through',
  '2day': 'today',
  '&': 'and',
};

/**
 * Words people misspell that the layer must still read. Only a word that is not itself a known word
 * is repaired, and only to one of these, so "stop" never becomes "step".
 */
export const REPAIRABLE_WORDS = [
  'average',
  'typical',
  'typically',
  'usually',
  'sleep',
  'slept',
  'sleeping',
  'heart',
  'resting',
  'variability',
  'steps',
  'walking',
  'exercise',
  'exercising',
  'workout',
  'workouts',
  'cholesterol',
  'glucose',
  'triglycerides',
  'ferritin',
  'vitamin',
  'stress',
  'minutes',
  'weekend',
  'weekends',
  'weekday',
  'variable',
  'patterns',
  'blockers',
  'sessions',
  'upload',
  'yesterday',
  'tonight',
  'morning',
  'compare',
  'comparison',
  'correlation',
  'correlated',
  'related',
  'relationship',
  'affect',
  'affects',
  'improve',
  'improving',
  'increase',
  'decrease',
  'trend',
  'trending',
  'normal',
  'concern',
  'concerning',
  'healthy',
  'recommend',
  'recommendation',
  'interesting',
  'anything',
  'something',
  'running',
  'cycling',
  'swimming',
  'strength',
  'biomarkers',
  'hemoglobin',
  'month',
  'months',
  'week',
  'weeks',
  'recently',
  'lately',
  'consistent',
  'regular',
  'median',
  'highest',
  'lowest',
  'total',
  'deep',
  'light',
  'score',
  'active',
  'zone',
  'pulse',
];

/** Common words that look like misspellings of a vocabulary word but are not ("heat", "sleek"). */
const KNOWN_WORDS = new Set([
  'heat',
  'hear',
  'sheep',
  'sleek',
  'steep',
  'sweep',
  'slip',
  'stop',
  'step',
  'stew',
  'steer',
  'stress',
  'rest',
  'test',
  'best',
  'west',
  'week',
  'weak',
  'work',
  'worked',
  'monthly',
  'weekly',
  'deer',
  'dee',
  'keep',
  'seep',
  'beep',
  'peep',
  'norm',
  'total',
  'trend',
  'tend',
  'lately',
  'late',
  'later',
  'light',
  'fight',
  'night',
  'right',
  'might',
  'sight',
  'tight',
  'eight',
  'active',
  'action',
  'score',
  'store',
  'scare',
  'scores',
  'zone',
  'done',
  'gone',
  'none',
  'tone',
  'one',
  'stroke',
  'strong',
  'regularly',
  'compared',
  'moth',
  'mouth',
  'mean',
  'means',
  'meant',
  'deal',
  'dear',
  'feel',
  'feels',
  'deeper',
  'deeply',
  'sleepy',
  'asleep',
  'sleeps',
  'sleeper',
  'steps',
  'stepped',
  'walk',
  'walks',
  'walked',
  'heartbeat',
  'hearts',
  'runs',
  'runner',
  'run',
  'ran',
  'swim',
  'swam',
  'swims',
  'swimmer',
  'cycle',
  'cycles',
  'cycled',
  'bicycling',
  'biking',
  'average',
  'averages',
  'averaged',
  'typical',
  'normally',
  'normal',
  'concern',
  'concerned',
  'usual',
  'usually',
  'affected',
  'effect',
  'effects',
  'infect',
  'impact',
  'improve',
  'improved',
  'approve',
  'prove',
  'trending',
  'trends',
  'related',
  'relate',
  'relates',
  'elated',
  'workout',
  'workouts',
  'stressed',
  'stressful',
  'minute',
  'minutes',
  'minuets',
  'pulse',
  'pulses',
  'false',
  'impulse',
  'there',
  'their',
  'these',
  'those',
  'three',
  'where',
  'were',
  'here',
  'hero',
  'heard',
  'worst',
  'worse',
  'better',
  'wall',
  'walls',
  'tall',
  'call',
  'ball',
  'mall',
  'fall',
  'hall',
  'well',
  'wake',
  'sleet',
  'steam',
  'scope',
]);

/** Damerau–Levenshtein (optimal string alignment) distance, cut short once it passes `limit`. */
function editDistanceAtMost(a: string, b: string, limit: number): boolean {
  if (Math.abs(a.length - b.length) > limit) return false;
  let twoBack: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      // Two neighbouring letters swapped ("haert") is one slip, not two.
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, twoBack[j - 2] + 1);
      current.push(value);
    }
    if (Math.min(...current) > limit) return false;
    twoBack = previous;
    previous = current;
  }
  return previous[b.length] <= limit;
}

const repairCache = new Map<string, string>();

/** The vocabulary word a misspelt word stands for, or the word itself. */
function repairSpelling(word: string, vocabulary: ReadonlySet<string>, targets: readonly string[]): string {
  if (word.length < 4 || vocabulary.has(word) || KNOWN_WORDS.has(word) || /\d/.test(word)) return word;
  const cached = repairCache.get(word);
  if (cached !== undefined) return cached;
  // "stages" and "drink" are inflections of known words, not slips: leave them be.
  const stem = word.replace(/(?:es|s|ed|ing)$/, '');
  if (stem !== word && (vocabulary.has(stem) || vocabulary.has(`${stem}e`))) return word;
  const limit = word.length >= 7 ? 2 : 1;
  let repaired = word;
  for (const candidate of targets) {
    // Misspellings keep the first letter: "slep" is sleep, "leep" is not guessed at.
    if (candidate[0] !== word[0] || candidate === `${word}s` || candidate === `${word}es`) continue;
    if (editDistanceAtMost(word, candidate, limit)) {
      repaired = candidate;
      break;
    }
  }
  repairCache.set(word, repaired);
  return repaired;
}

/** The message as normalised words joined by single spaces, with a leading and trailing space for whole-word matching. */
export function normalise(text: string, vocabulary: ReadonlySet<string>, targets: readonly string[]): string {
  let lower = text
    .toLowerCase()
    .replace(/[’‘`´]/g, "'")
    .replace(/[“”]/g, '"');
  for (const [pattern, replacement] of CONTRACTIONS) lower = lower.replace(pattern, replacement);
  const words = lower
    .replace(/(\d),(\d{3})/g, '$1$2')
    .replace(/\b(\d+)([a-z]+)/g, '$1 $2')
    .split(/[^a-z0-9.&/]+/)
    .flatMap((word) => word.replace(/^[./]+|[./]+$/g, '').split('/'))
    .filter((word) => word !== '')
    .map((word) => ownValue(SPELLINGS, word) ?? word)
    .flatMap((word) => word.split(' '))
    .map((word) => repairSpelling(word, vocabulary, targets));
  return ` ${words.join(' ')} `;
}

/** Whether the normalised text holds the phrase as whole words. */
export const has = (text: string, phrase: string) => text.includes(` ${phrase} `);

export const hasAny = (text: string, phrases: readonly string[]) => phrases.some((phrase) => has(text, phrase));
