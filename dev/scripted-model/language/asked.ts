/**
 * What a data question asks for: the statistic (see `SpecStatistic` in understanding.ts for what each
 * everyday word means), and for a comparison which groups of days.
 */
import type { SpecStatistic, SpecWindow } from './understanding';
import { hasAny } from './words';

const ASSOCIATION = [
  'correlate',
  'correlates',
  'correlated',
  'correlation',
  'correlations',
  'related',
  'relate',
  'relates',
  'relationship',
  'relation',
  'associated',
  'association',
  'affect',
  'affects',
  'affected',
  'affecting',
  'effect',
  'effects',
  'impact',
  'impacts',
  'impacted',
  'influence',
  'influences',
  'linked',
  'link',
  'links',
  'connected',
  'connection',
  'connect',
  'go together',
  'goes together',
  'anything to do with',
  'something to do with',
  'to do with',
  'when my',
  'whenever my',
  'whenever i',
  'go with',
  'goes with',
  'tied to',
  'depend on',
  'depends on',
  'make a difference',
  'makes a difference',
  'help my',
  'helps my',
  'hurt my',
  'hurts my',
  'mess with',
  'messes with',
  'messing with',
  'better on days',
  'worse on days',
  'on days i',
  'on days when',
  'on days with',
  'the days i',
  'days when i',
  'after i',
  'when i',
];

/**
 * A comparison conditioned on another metric ("on days I work out", "on nights I sleep longer", "when
 * my stress goes down", "does my sleep depend on how hard I exercise"): an association whose feature is
 * the first metric named after the condition.
 */
export const CONDITION =
  / (?:on|in) (?:the )?(?:days|nights|mornings|evenings) (?:when|with|that|where|after|i|my) | (?:when|whenever|after|if) (?:i|my) | (?:depends?|depending|dependent) (?:up)?on /;

const WEEKEND = [
  'weekend',
  'at the weekend',
  'on the weekend',
  'saturdays',
  'sundays',
  'saturday and sunday',
  'saturdays and sundays',
  'sat and sun',
];
const WEEKDAY = ['weekday', 'week days', 'during the week', 'monday to friday', 'workweek', 'work week'];

const DAY_OF_WEEK = [
  'day of the week',
  'days of the week',
  'day of week',
  'which day',
  'which days',
  'what day',
  'what days',
  'which weekday',
  'by weekday',
  'each weekday',
  'on mondays',
  'on tuesdays',
  'on wednesdays',
  'on thursdays',
  'on fridays',
  'night of the week',
  'nights of the week',
  'midweek',
  'mid week',
];

/** "than the fortnight before", "against the month before that": this period against the one before it. */
const AGAINST_PERIOD_BEFORE =
  / (?:than|versus|compare to|compare with|against) (?:the |that )?(?:week|month|fortnight|year|period) (?:before|prior|earlier) /;

/** "this fortnight than the fortnight before", "this month versus last month". */
const PERIOD_AGAINST_PERIOD =
  / (?:this|last|past) (week|month|fortnight|year) (?:\S+ ){0,4}(?:than|versus|compare to|compare with|against|to) (?:the )?(?:last|previous|prior)? ?\1(?: before)? /;

const PREVIOUS_PERIOD = [
  'compare to last',
  'compare with last',
  'compare to the previous',
  'compare with the previous',
  'compare to the',
  'compare with the',
  'versus last',
  'versus the',
  'than last',
  'than the previous',
  'than the month before',
  'than the week before',
  'than before',
  'than last time',
  'than the prior',
  'against last',
  'against the previous',
  'this month and last month',
  'this week and last week',
  'this month or last month',
  'this week or last week',
  'from last month',
  'from last week',
];

/** A trend said outright: what coaching keeps, unlike "improve" or "change", which there are the ask. */
export const STRONG_TREND = [
  'trend',
  'trending',
  'going up',
  'going down',
  'gone up',
  'gone down',
  'went up',
  'went down',
  'higher than usual',
  'lower than usual',
  'dropping',
  'declining',
  'creeping up',
  'creeping down',
];

const CHANGE = [
  'higher than usual',
  'lower than usual',
  'higher than normal',
  'lower than normal',
  'dips',
  'since my last test',
  'between my blood tests',
  'between tests',
  'trend',
  'trends',
  'trending',
  'going up',
  'going down',
  'gone up',
  'gone down',
  'went up',
  'went down',
  'goes up',
  'goes down',
  'creeping up',
  'creeping down',
  'improve',
  'improved',
  'improving',
  'improvement',
  'getting better',
  'getting worse',
  'gotten better',
  'gotten worse',
  'got better',
  'got worse',
  'increase',
  'increased',
  'increasing',
  'decrease',
  'decreased',
  'decreasing',
  'drop',
  'dropped',
  'dropping',
  'decline',
  'declined',
  'declining',
  'rise',
  'rising',
  'risen',
  'rose',
  'fall',
  'falling',
  'fallen',
  'fell',
  'change',
  'changed',
  'changing',
  'changes',
  'over time',
  'direction',
  'heading',
  'worsening',
  'slipping',
  'climbing',
  'up or down',
  'come down',
  'came down',
  'coming down',
  'come up',
  'came up',
  'coming up',
  'moved',
  'shifted',
  'better or worse',
  'worse or better',
  'or worse',
  'or better',
  'any better',
  'any worse',
  'been better',
  'been worse',
];

/**
 * A lab over its panels: "across my blood tests", "between my last two panels", "since my previous
 * test". Its change is latest_change (the latest panel against the one before and the first).
 */
export const ACROSS_TESTS =
  / (?:since|across|between|over|throughout) (?:\S+ ){0,4}(?:tests?|panels?|results|bloodwork|blood work|draws?|labs|checks?) /;

/** Words that ask for a workout's distance ("how far", "farthest", km, miles): measure distance_km. */
const DISTANCE = [
  'how far',
  'farthest',
  'furthest',
  'distance',
  'distances',
  'km',
  'kms',
  'kilometre',
  'kilometres',
  'kilometer',
  'kilometers',
  'mile',
  'miles',
  'metres',
  'meters',
];
/** Calories spent in a workout (not eaten): measure calories. */
const CALORIES_BURNED = ['calories', 'calorie', 'kcal', 'burn', 'burned', 'burnt', 'burning', 'energy burned'];

/** What a workouts statistic is over when not the duration: a distance or the calories burned; else undefined. */
export function workoutMeasure(text: string): 'distance_km' | 'calories' | undefined {
  if (hasAny(text, DISTANCE)) return 'distance_km';
  if (hasAny(text, CALORIES_BURNED)) return 'calories';
  return undefined;
}

const SPREAD = [
  'consistent',
  'consistency',
  'inconsistent',
  'regular',
  'regularity',
  'irregular',
  'variable',
  'variation',
  'vary',
  'varies',
  'spread',
  'fluctuate',
  'fluctuates',
  'fluctuating',
  'fluctuation',
  'stable',
  'variability',
  'standard deviation',
  'all over the place',
  'jump around',
  'jumps around',
];

const MAX = [
  'most',
  'highest',
  'max',
  'maximum',
  'peak',
  'best',
  'longest',
  'biggest',
  'record',
  'top',
  'greatest',
  'largest',
  'more than ever',
  'farthest',
  'furthest',
];
const MIN = ['least', 'lowest', 'minimum', 'min', 'worst', 'fewest', 'shortest', 'smallest', 'bottom'];
const TOTAL = [
  'total',
  'in total',
  'altogether',
  'all together',
  'sum',
  'combined',
  'cumulative',
  'add up',
  'overall total',
  'all told',
  'in all',
];
const COUNT = ['how many times', 'how often', 'number of', 'how many', 'count', 'how many days', 'how many nights'];
const MEAN_WORDS = [
  'averaging',
  'on average',
  'average',
  'averages',
  'averaged',
  'mean',
  'typical',
  'typically',
  'usual',
  'usually',
  'normally',
  'on average',
  'per day',
  'per night',
  'a day',
  'a night',
  'each day',
  'each night',
  'every day',
  'every night',
  'daily',
  'nightly',
  'generally',
  'tend to',
];

/**
 * A rate's period ("per week", "a week", "each month", "every week", "twice a month", "weekly",
 * "monthly"), not a window's own words ("in a week", "over a month", "a week ago", "the week before").
 */
const RATE_PERIOD =
  / (?:(?<! (?:in|over|for|within|than|after|under|about) )a|per|each|every) (week|month)(?= )(?! ago | before | earlier | later | or two )| (week|month)ly /;

/** Asked in the past ("did I", "have I done"), not of a habit ("do I", "usually"). */
const inThePast = (text: string) =>
  hasAny(text, ['did i', 'have i', 'i have', 'i did', 'spent', 'done', 'did']) && !hasAny(text, ['do i', 'usually']);

/**
 * The rate a workouts question asks for: per_week or per_month as its period says, and "how often do
 * I …" a weekly one (while "how often did I … last month" counts them); null when none is asked.
 */
function askedRate(text: string): 'per_week' | 'per_month' | null {
  const period = RATE_PERIOD.exec(text);
  if (period) return (period[1] ?? period[2]) === 'month' ? 'per_month' : 'per_week';
  if (hasAny(text, ['how often']) && !inThePast(text)) return 'per_week';
  return null;
}

export interface Asked {
  statistic: SpecStatistic;
  /** A comparison's other group of days. */
  target: 'weekend' | 'previous_period' | null;
}

/**
 * The statistic a normalised question asks for. `metricCount` is how many metrics it names: an
 * association needs two, and "how many" counts workouts but means a total or a mean for steps.
 * `workouts`: whether its subject is workouts, the only metric with a rate ("how many runs a week?";
 * "how many steps a day?" stays the mean).
 */
export function askedStatistic(
  text: string,
  {
    metricCount,
    countable,
    window,
    workouts = false,
  }: { metricCount: number; countable: boolean; window: SpecWindow | null; workouts?: boolean },
): Asked {
  if (metricCount >= 2 && (hasAny(text, ASSOCIATION) || CONDITION.test(text)))
    return { statistic: 'spearman', target: null };
  // "Which weekday…" asks for the day-of-week breakdown; a weekday named against the weekend (or on its
  // own, "during the week") asks for the weekday/weekend contrast.
  const byDay = hasAny(text, DAY_OF_WEEK);
  if (hasAny(text, WEEKEND) || (hasAny(text, WEEKDAY) && !byDay)) return { statistic: 'difference', target: 'weekend' };
  if (byDay) return { statistic: 'day_of_week', target: null };
  if (hasAny(text, PREVIOUS_PERIOD) || PERIOD_AGAINST_PERIOD.test(text) || AGAINST_PERIOD_BEFORE.test(text))
    return { statistic: 'difference', target: 'previous_period' };
  if (hasAny(text, ['median'])) return { statistic: 'median', target: null };
  if (hasAny(text, SPREAD)) return { statistic: 'sd', target: null };
  if (hasAny(text, CHANGE)) return { statistic: 'change', target: null };
  if (hasAny(text, MAX)) return { statistic: 'max', target: null };
  if (hasAny(text, MIN)) return { statistic: 'min', target: null };
  // "How many km a week", "average weekly distance", "monthly workout count": a rate, before a total,
  // count or mean its other words might ask for.
  const rate = workouts ? askedRate(text) : null;
  if (rate) return { statistic: rate, target: null };
  if (hasAny(text, TOTAL)) return { statistic: 'total', target: null };
  if (countable && hasAny(text, COUNT)) return { statistic: 'count', target: null };
  // "How many steps did I do this week?": over several days, with no "a day" or "average", a total.
  const severalDays = window !== null && ('since' in window || window.days === null || window.days > 1);
  if (
    severalDays &&
    inThePast(text) &&
    hasAny(text, ['how many', 'how much', 'how much time', 'how far']) &&
    !hasAny(text, MEAN_WORDS)
  ) {
    return { statistic: 'total', target: null };
  }
  return { statistic: 'mean', target: null };
}

export const asksForAverage = (text: string) => hasAny(text, MEAN_WORDS);
