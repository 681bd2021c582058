/**
 * `understand(messages)`: the routing pattern and the Data Science spec of the last user message, read
 * in the context of the conversation before it. One function, so the classification, routing, rephrase
 * and Data Science steps of the scripted model never disagree about a question.
 */
import { ACROSS_TESTS, CONDITION, STRONG_TREND, askedStatistic, asksForAverage, workoutMeasure } from './asked';
import {
  ABOUT_AMY,
  ARITHMETIC,
  ENOUGH_ACTIVITY,
  HEALTH_TOPIC,
  OFF_TOPIC,
  COACHING,
  DATA_ASK,
  DATA_WORDS,
  DEVICE,
  GENERAL_POPULATION,
  GOODBYE,
  GREETING,
  JUDGEMENT,
  KNOWLEDGE,
  LAB_WORDS,
  MEDICAL,
  OPEN_ENDED,
  OWN_ACTIVITY,
  PERSONAL,
  THANKS,
  VAGUE,
} from './cues';
import {
  CALORIES_BURNED,
  EVERYDAY_WORDS,
  LAB_FEATURES,
  METRIC_WORDS,
  mentionedMetrics,
  type MetricMention,
} from './metrics';
import { NAMED_YEAR, timeWindow } from './time-window';
import type { DataSpec, RoutingPattern, SpecKind, SpecStatistic, SpecWindow, Understanding } from './understanding';
import { REPAIRABLE_WORDS, has, hasAny, normalise } from './words';

export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Every word the lists above use: a word in here is never "repaired". */
const VOCABULARY: ReadonlySet<string> = new Set([
  ...METRIC_WORDS,
  ...EVERYDAY_WORDS,
  ...REPAIRABLE_WORDS,
  ...[
    ...GREETING,
    ...THANKS,
    ...GOODBYE,
    ...ABOUT_AMY,
    ...DEVICE,
    ...VAGUE,
    ...KNOWLEDGE,
    ...JUDGEMENT,
    ...COACHING,
    ...MEDICAL,
    ...DATA_ASK,
    ...DATA_WORDS,
    ...GENERAL_POPULATION,
    ...LAB_WORDS,
    ...OFF_TOPIC,
    ...HEALTH_TOPIC,
  ].flatMap((phrase) => phrase.split(' ')),
]);

/** What a misspelt word may be repaired to: the metric, statistic and medical words, never small talk. */
const REPAIR_TARGETS: readonly string[] = [
  ...new Set([...METRIC_WORDS, ...REPAIRABLE_WORDS, ...[...MEDICAL, ...LAB_WORDS].flatMap((p) => p.split(' '))]),
].filter((word) => word.length >= 4);

export const normaliseMessage = (text: string) => normalise(text, VOCABULARY, REPAIR_TARGETS);

const SLEEP_FEATURES = new Set([
  'sleep_minutes',
  'deep_sleep_minutes',
  'rem_sleep_minutes',
  'light_sleep_minutes',
  'awake_minutes',
  'sleep_score',
]);

/** One message as the rules below see it. */
interface Reading {
  text: string;
  /** The sentences that ask (end in "?"), where the statistic is read first; the whole text when none do. */
  asking: string;
  metrics: MetricMention[];
  available: MetricMention[];
  window: SpecWindow | null;
  wordCount: number;
  /** Whether the message asks anything ("?"): thanks that ask nothing are conversation whatever they praise. */
  asks: boolean;
}

function read(message: string): Reading {
  const text = normaliseMessage(message);
  const questions = message.split(/(?<=[?])\s+|(?<=[.!])\s+(?=[A-Z])/).filter((s) => s.includes('?'));
  const metrics = mentionedMetrics(text);
  return {
    text,
    asking:
      questions.length > 0 && questions.length < message.split(/[.!?]\s+/).length
        ? normaliseMessage(questions.join(' '))
        : text,
    metrics,
    available: metrics.filter((m) => m.source !== 'unavailable'),
    window: timeWindow(text),
    wordCount: text.trim() === '' ? 0 : text.trim().split(' ').length,
    asks: message.includes('?'),
  };
}

/** Text with the metric phrases blanked, so "total cholesterol" does not ask for a total. */
function withoutMetrics(text: string): string {
  let rest = text;
  for (const mention of mentionedMetrics(text)) rest = rest.replace(` ${mention.phrase} `, ' _ ');
  return rest;
}

/** "my sleep", "my resting heart rate", "my recent HRV": the user's own measurement ("I" alone is not: "how do I get into swimming?"). */
function ownsMetric(reading: Reading): boolean {
  return reading.available.some((m) => {
    const before = reading.text.slice(Math.max(0, m.at - 30), m.at + 1);
    return / my (?:\S+ ){0,2}$/.test(before);
  });
}

/** General knowledge that is not about health: no metric, nothing medical, no health word, and an off-topic subject. */
const isOffTopic = (text: string, metrics: MetricMention[]) =>
  (hasAny(text, OFF_TOPIC) || ARITHMETIC.test(text)) &&
  metrics.length === 0 &&
  !hasAny(text, [...MEDICAL, ...LAB_WORDS, ...HEALTH_TOPIC]);

/**
 * Greetings, thanks and goodbyes (when they carry no ask of their own), small talk about Amy, device
 * help. Thanks followed by something the user tells about themselves ("Thanks! I only work out in the
 * mornings.") ask nothing, whatever metric they mention.
 */
const isConversation = ({ text, metrics, wordCount, asks }: Reading) =>
  hasAny(text, ABOUT_AMY) ||
  isOffTopic(text, metrics) ||
  hasAny(text, DEVICE) ||
  (hasAny(text, [...GREETING, ...THANKS, ...GOODBYE]) &&
    (wordCount <= 2 ||
      (!asks && !hasAny(text, [...COACHING, ...DATA_ASK])) ||
      (metrics.length === 0 &&
        !hasAny(text, [...COACHING, ...DATA_ASK]) &&
        (!asks || !hasAny(text, [...KNOWLEDGE, ...JUDGEMENT])))));

/** A value the user states ("an LDL of 130", "about 6 hours", "12 minutes a day"), windows aside. */
const statesValue = (text: string) =>
  / \d+(?:\.\d+)? /.test(
    text
      .replace(/ (?:last|past|previous|over|in|the|since|for) (?:the )?(?:last |past )?\d+ \w+ /g, ' ')
      .replace(/ \d+ (?:st|nd|rd|th) /g, ' ')
      .replace(/ since \S+ \d+ /g, ' ')
      .replace(NAMED_YEAR, ' '),
  );

const judges = (text: string) => hasAny(text, JUDGEMENT);

/** A coaching ask, unless it only asks whether to worry or see a doctor (a judgement). */
const coaches = (text: string) => hasAny(text, COACHING);

const general = (text: string) => hasAny(text, GENERAL_POPULATION) && !hasAny(text, ['my', 'mine', 'i', 'me']);

/** A workouts rate (per_week, per_month): workouts only, a daily metric's "per day" is its mean. */
const isRate = (statistic: SpecStatistic) => statistic === 'per_week' || statistic === 'per_month';

function kindOf(statistic: SpecStatistic): SpecKind {
  if (statistic === 'change') return 'trend';
  if (statistic === 'difference' || statistic === 'day_of_week') return 'comparison';
  if (statistic === 'spearman') return 'association';
  return 'description';
}

/** "based on my recent workouts", "given my LDL result": the metric a data phrase points at. */
const ANCHOR =
  / (?:based on|given|using|looking at|considering|going by|from|according to) (?:how (?:much|many) )?(?:my |the )?(?:recent |current |latest |last |own )?$/;

/**
 * The metrics a question is about, its subject first. One workout type beats workouts in general
 * ("should I add another run?"), unless it names several kinds ("balance strength and cardio"). When
 * coaching, the metric a data phrase points at comes first; else a daily metric before a lab (the lab
 * is the context), and a lab before exercise in general ("my HDL is low, what exercise would help?").
 */
function subjectOf(reading: Reading, { coaching }: { coaching: boolean }): MetricMention[] {
  const available = reading.available;
  const types = available.filter((m) => m.source === 'workouts' && (m.workoutType || m.category));
  const generic = available.find((m) => m.source === 'workouts' && !m.workoutType && !m.category);
  let metrics = available.filter((m) => !m.category || (!generic && types.length > 1));
  if (generic && types.length === 1 && types[0].workoutType) metrics = metrics.filter((m) => m !== generic);
  if (types.length > 1) metrics = metrics.filter((m) => m.source !== 'workouts' || m === (generic ?? types[0]));
  if (types.length > 1 && !generic)
    metrics = metrics.map((m) => (m.source === 'workouts' ? { ...m, workoutType: undefined, category: false } : m));
  if (!coaching) return metrics;
  const anchored = metrics.find((m) => m.positions.some((at) => ANCHOR.test(reading.text.slice(0, at + 1))));
  const rank = (m: MetricMention) => (m === anchored ? 0 : m.source === 'daily' ? 1 : m.source === 'labs' ? 2 : 3);
  return [...metrics].sort((a, b) => rank(a) - rank(b));
}

/** The current period of a comparison with the one before: "this fortnight than the fortnight before" → 14 days. */
function currentPeriod(text: string): SpecWindow | null {
  const against =
    / (?:than|versus|to|with|against|and|or|from) (?:the )?(?:last|previous|prior)? ?(week|month|fortnight|year)(?: before)? /g;
  const rest = timeWindow(text.replace(against, ' '));
  if (rest) return rest;
  // "than the fortnight before" with no period of its own: the same length as the one it is set against.
  const unit = against.exec(text)?.[1];
  return unit ? timeWindow(` the last ${unit} `) : null;
}

/** Walking said as a verb ("how many miles did I walk") is steps, unless a distance is asked: only walking workouts hold one. */
const WALKING_VERBS = ['walk', 'walked', 'walking'];

/**
 * An association's metrics as the question conditions them: the first named after the condition ("on
 * days I work out", "when my stress goes down", "depend on how hard I exercise") acts, the other is acted
 * on; with no condition, the first mentioned acts.
 */
function conditioned(reading: Reading, first: MetricMention, second: MetricMention): [MetricMention, MetricMention] {
  const condition = CONDITION.exec(reading.text);
  if (!condition) return [first, second];
  const after = (m: MetricMention) => Math.min(...m.positions.filter((at) => at >= condition.index), Infinity);
  return after(second) < after(first) ? [second, first] : [first, second];
}

function specFor(reading: Reading, options: { coaching?: boolean; statistic?: SpecStatistic } = {}): DataSpec | null {
  const metrics = subjectOf(reading, { coaching: options.coaching === true });
  if (metrics.length === 0) return null;
  let [first, second] = metrics;
  const countable = first.source === 'workouts' || / how many (?:days|nights|times) /.test(reading.text);
  // "How many miles a week do I walk?" is walking workouts (see below), so it has a rate as workouts do.
  const walkedDistance =
    first.feature === 'steps' &&
    WALKING_VERBS.includes(first.phrase) &&
    workoutMeasure(withoutMetrics(reading.text)) === 'distance_km';
  const workouts = first.source === 'workouts' || walkedDistance;
  const read = (text: string) =>
    askedStatistic(withoutMetrics(text), {
      metricCount: metrics.length,
      countable,
      window: reading.window,
      workouts,
    });
  let asked = options.statistic ? { statistic: options.statistic, target: null } : read(reading.asking);
  if (
    !options.statistic &&
    asked.statistic === 'mean' &&
    reading.asking !== reading.text &&
    !asksForAverage(reading.asking)
  ) {
    asked = read(reading.text);
  }
  let { statistic } = asked;
  let window: SpecWindow = reading.window ?? { days: null };
  // Coaching asks to improve or change a metric: that is the ask, not a trend to measure.
  if (options.coaching && statistic === 'change' && !hasAny(reading.text, STRONG_TREND)) statistic = 'mean';
  // Coaching works from how often (or how much) recently, not a rate said in passing ("another run each week").
  if (options.coaching && isRate(statistic)) statistic = has(reading.text, 'how much') ? 'total' : 'count';
  if (options.coaching && ['count', 'total'].includes(statistic) && reading.window === null) window = { days: 30 };
  if (options.coaching && ['mean', 'median', 'min', 'max', 'latest'].includes(statistic)) {
    // Coaching works from the recent level of a metric (how often, for workouts), not a statistic said in passing.
    statistic =
      first.source === 'labs'
        ? 'latest'
        : first.source === 'workouts'
          ? has(reading.text, 'how much')
            ? 'total'
            : 'count'
          : 'mean';
    if (
      statistic !== 'latest' &&
      (reading.window === null || ('days' in reading.window && reading.window.days === 1))
    ) {
      window = { days: 30 };
    }
  }
  if (statistic === 'sd' && options.coaching && reading.window === null) window = { days: 30 };
  // "last night" and "yesterday" for sleep are the same night: a night is recorded on the day it ends.
  if (SLEEP_FEATURES.has(first.feature) && 'days' in window && window.days === 1 && window.offset === 1)
    window = { days: 1 };
  if (first.source === 'labs') {
    // A lab is a handful of tests: its latest value, or how it changed across them, whatever the window words.
    if (
      statistic === 'change' ||
      (statistic === 'difference' && asked.target === 'previous_period') ||
      (!options.coaching && ACROSS_TESTS.test(reading.text))
    ) {
      statistic = 'latest_change';
      window = reading.window ?? { days: null };
    }
    if (
      ['mean', 'max', 'min'].includes(statistic) &&
      (reading.window === null || hasAny(reading.text, ['most recent', 'latest']))
    ) {
      statistic = 'latest';
    }
    if (statistic === 'latest') window = { days: null };
  } else {
    if ('days' in window && window.days === 1 && ['mean', 'median', 'total'].includes(statistic)) statistic = 'latest';
    // A trend needs a period to set against the one before: a month when none is said.
    if (statistic === 'change' && reading.window === null) window = { days: 30 };
    if (asked.target === 'previous_period') window = currentPeriod(reading.text) ?? { days: 30 };
  }
  let measure = statistic === 'spearman' ? undefined : workoutMeasure(withoutMetrics(reading.text));
  if (measure === 'distance_km' && first.feature === 'steps' && WALKING_VERBS.includes(first.phrase))
    first = { ...first, feature: 'workouts', source: 'workouts', workoutType: 'walking' };
  if (first.feature !== 'workouts') measure = undefined;
  // "How many km / calories": a count of a measure is its total (or its mean, "on average").
  if (measure && statistic === 'count' && !options.coaching)
    statistic = asksForAverage(withoutMetrics(reading.text)) ? 'mean' : 'total';
  if (statistic === 'spearman' && second) [first, second] = conditioned(reading, first, second);
  const spec: DataSpec = {
    kind: kindOf(statistic),
    statistic,
    feature: first.feature,
    target: statistic === 'spearman' ? (second?.feature ?? null) : statistic === 'difference' ? asked.target : null,
    window,
  };
  // An association's workout type is that of whichever of its metrics is workouts.
  const workoutsMetric = statistic === 'spearman' && second?.source === 'workouts' ? second : first;
  if (workoutsMetric.workoutType) spec.workout_type = workoutsMetric.workoutType;
  if (measure && statistic !== 'count') spec.measure = measure;
  // A rate counts workouts unless it asks for their time ("minutes of cycling a week").
  if (!measure && RATES.includes(statistic) && first.feature === 'workouts' && hasAny(reading.text, TIME_WORDS))
    spec.measure = 'duration_minutes';
  return spec;
}

const RATES: readonly string[] = ['per_week', 'per_month'];
/** Words that ask for the time spent, not the number of sessions. */
const TIME_WORDS = ['minutes', 'mins', 'hours', 'hrs', 'time', 'how long'];

/** Words that ask for a number of the user's own ("Total steps this week?", "Max HRV in the past 7 days?"). */
const STATISTIC_WORDS = [
  'average',
  'averages',
  'averaging',
  'avg',
  'median',
  'total',
  'max',
  'maximum',
  'min',
  'minimum',
  'most',
  'least',
  'fewest',
  'highest',
  'lowest',
  'per day',
  'a day',
  'per night',
  'a night',
  'daily',
  'nightly',
  'how many',
  'how much',
  'how often',
  'how far',
  'longest',
  'shortest',
  'farthest',
  'furthest',
];

/** A terse ask for the user's value ("vit d level?", "ferritin result"): a word for it, and little else. */
const TERSE_VALUE = ['level', 'levels', 'result', 'reading', 'value', 'number'];
const asksTerseValue = ({ text, wordCount }: Reading) => wordCount <= 4 && hasAny(text, TERSE_VALUE);

const none = (pattern: RoutingPattern): Understanding => ({ pattern, spec: null, missing: [] });

/**
 * "Am I getting enough exercise?", "am I active enough": the user's own activity judged against the
 * guideline, which is about activity minutes a week: the mean of active_zone_minutes over the last 30
 * days (or the window said). Not when it asks for advice or about people in general.
 */
function enoughActivity(reading: Reading): Understanding | null {
  const { text } = reading;
  if (!ENOUGH_ACTIVITY.test(text) || !hasAny(text, PERSONAL) || coaches(text) || general(text)) return null;
  if (reading.available.some((m) => m.source !== 'workouts' && m.feature !== 'steps')) return null;
  const spec: DataSpec = {
    kind: 'description',
    statistic: 'mean',
    feature: 'active_zone_minutes',
    target: null,
    window: reading.window ?? { days: 30 },
  };
  return { pattern: 'my_data_judged', spec, missing: [] };
}

/** One message on its own, without the conversation. */
function understandMessage(reading: Reading): Understanding {
  const { text, metrics, available } = reading;
  const missing = metrics.filter((m) => m.source === 'unavailable').map((m) => m.feature);
  const medical = hasAny(text, MEDICAL) || available.some((m) => m.source === 'labs') || hasAny(text, LAB_WORDS);
  const topic = metrics.length > 0 || medical;

  if (isConversation(reading)) return none('conversation');
  const guideline = enoughActivity(reading);
  if (guideline) return guideline;
  if (!topic && reading.wordCount <= 4 && !hasAny(text, VAGUE)) return none('unclear');

  const judged = judges(text);
  const pronounJudged = judged && / (?:is|was|are) (?:that|it|this|those) /.test(text);
  const vague = !pronounJudged && (hasAny(text, VAGUE) || OPEN_ENDED.test(text));
  if (vague && available.length === 0) return none('investigate');

  const personal = hasAny(text, PERSONAL) || hasAny(text, DATA_WORDS);
  const isGeneral = general(text);
  if (metrics[0]?.source === 'unavailable' && personal && !coaches(text) && !isGeneral) {
    return { pattern: 'unavailable', spec: null, missing };
  }

  const ownData =
    hasAny(text, DATA_WORDS) ||
    ownsMetric(reading) ||
    OWN_ACTIVITY.test(text) ||
    (reading.window !== null && available.length > 0);
  if (coaches(text) && !isGeneral) {
    if (!ownData) return none('coaching');
    const pattern: RoutingPattern = medical ? 'coaching_with_context' : 'coaching_on_my_data';
    return { pattern, spec: specFor(reading, { coaching: true }), missing };
  }

  const knowledge = hasAny(text, KNOWLEDGE);
  // The user's own numbers: said so ("my", "did I"), or a metric with a window or a statistic asked of it.
  const implicit =
    available.length > 0 &&
    !isGeneral &&
    !knowledge &&
    (reading.window !== null ||
      hasAny(text, DATA_ASK) ||
      hasAny(withoutMetrics(text), STATISTIC_WORDS) ||
      asksTerseValue(reading));
  const mine = !isGeneral && available.length > 0 && (personal || implicit);
  if (mine || (personal && hasAny(text, DATA_WORDS) && !isGeneral)) {
    if (vague && !judged) return { pattern: 'my_data', spec: specFor(reading, { statistic: 'change' }), missing };
    const labs = available.some((m) => m.source === 'labs');
    const computes = hasAny(text, DATA_ASK) || hasAny(withoutMetrics(text), STATISTIC_WORDS) || / compare /.test(text);
    if (judged || labs || (knowledge && !computes) || (statesValue(text) && !hasAny(text, DATA_ASK))) {
      return { pattern: 'my_data_judged', spec: specFor(reading), missing };
    }
    return { pattern: 'my_data', spec: specFor(reading), missing };
  }
  // A value the user states ("is an LDL of 130 bad?") is their own number, judged.
  if (available.length > 0 && statesValue(text) && !isGeneral && (judged || knowledge)) {
    return { pattern: 'my_data_judged', spec: specFor(reading), missing };
  }
  if (topic || knowledge || judged || missing.length > 0) return none('knowledge');
  return none('unclear');
}

/** A message that leans on the one before: "and the week before?", "what about my HRV?", "is that normal?". */
function isFollowUp(reading: Reading): boolean {
  return (
    reading.wordCount <= 12 &&
    (reading.metrics.length === 0 ||
      hasAny(reading.text, [
        'and',
        'what about',
        'how about',
        'same for',
        'that',
        'this',
        'it',
        'those',
        'these',
        'them',
        'they',
        'instead',
        'too',
        'also',
        'mine',
      ]))
  );
}

export function understand(messages: readonly ConversationMessage[]): Understanding {
  const users = messages.filter((m) => m.role === 'user');
  const last = users.at(-1);
  if (!last) return none('unclear');
  const reading = read(last.content);
  const alone = understandMessage(reading);
  if (users.length < 2 || alone.pattern === 'conversation' || alone.pattern === 'investigate') return alone;
  if (!isFollowUp(reading)) {
    const isData = alone.pattern === 'my_data' || alone.pattern === 'my_data_judged';
    return isData && alone.spec && 'days' in alone.spec.window && alone.spec.window.days === null
      ? keepConversationWindow(reading, alone, understand(users.slice(0, -1)))
      : alone;
  }
  const before = understand(users.slice(0, -1));
  const previous = read(users.at(-2)!.content);
  if (before.pattern === 'conversation' || before.pattern === 'unclear' || before.pattern === 'unavailable')
    return alone;
  return followUp(reading, alone, before, previous);
}

/** A short new data question in a conversation about a period keeps that period unless it names its own. */
function keepConversationWindow(reading: Reading, alone: Understanding, before: Understanding): Understanding {
  const window = before.spec?.window;
  if (
    !alone.spec ||
    reading.window !== null ||
    reading.wordCount > 12 ||
    !window ||
    ('days' in window && window.days === null)
  ) {
    return alone;
  }
  if (alone.spec.statistic === 'latest') return alone;
  return { ...alone, spec: { ...alone.spec, window } };
}

/** The follow-up read against the question before it: what it does not say, it keeps. */
function followUp(reading: Reading, alone: Understanding, before: Understanding, previous: Reading): Understanding {
  const { text } = reading;
  // "how many calories did they burn?" after a question about workouts: the workouts' calories.
  if (before.spec?.feature === 'workouts' && reading.metrics.every((m) => m.feature === CALORIES_BURNED))
    reading = { ...reading, metrics: [], available: [] };
  if (reading.metrics[0]?.source === 'unavailable') return alone;
  const earlier = before.spec ?? specFor({ ...previous, window: previous.window }, {});
  let spec: DataSpec | null = earlier;
  if (reading.available.length > 0) {
    const own = specFor({
      ...reading,
      window:
        reading.window ??
        (earlier?.window && !('since' in earlier.window) && earlier.window.days !== null
          ? earlier.window
          : reading.window),
    });
    const association =
      earlier && own && hasAny(text, ['affect', 'affects', 'related', 'linked', 'impact', 'correlated', 'connected']);
    if (association) {
      spec = {
        kind: 'association',
        statistic: 'spearman',
        feature: earlier.feature,
        target: own.feature,
        window: own.window,
      };
    } else if (own && earlier && own.statistic === 'mean' && !hasAny(text, ['average', 'mean'])) {
      // "what about my HRV?": the same question of another metric.
      spec = { ...earlier, feature: own.feature, window: reading.window ?? earlier.window };
      if (own.workout_type) spec.workout_type = own.workout_type;
      else delete spec.workout_type;
      if (own.feature !== 'workouts') delete spec.measure;
      // A rate is of workouts: of a daily metric or a lab the same question is its mean ("and my steps?").
      if (own.feature !== 'workouts' && isRate(spec.statistic)) spec = { ...spec, statistic: 'mean' };
      if (reading.available[0].source === 'labs' && spec.statistic === 'mean')
        spec = { ...spec, statistic: 'latest', window: { days: null } };
    } else {
      spec = own;
    }
  } else if (earlier) {
    const asked = askedStatistic(withoutMetrics(reading.asking), {
      metricCount: 1,
      countable: earlier.feature === 'workouts',
      window: reading.window,
      workouts: earlier.feature === 'workouts',
    });
    let statistic = asked.statistic === 'mean' ? earlier.statistic : asked.statistic;
    // "how far was that altogether?": the same workouts, over a distance (a count of which is its total).
    const measure = earlier.feature === 'workouts' ? workoutMeasure(reading.text) : undefined;
    if (measure && statistic === 'count') statistic = 'total';
    // "has it changed since my last test?" of a lab: how it changed across its panels.
    const labChange =
      LAB_FEATURES.has(earlier.feature) &&
      (statistic === 'change' || (statistic === 'difference' && asked.target === 'previous_period'));
    if (labChange) statistic = 'latest_change';
    spec = {
      ...earlier,
      statistic,
      kind: kindOf(statistic),
      target: statistic === 'difference' ? asked.target : statistic === earlier.statistic ? earlier.target : null,
    };
    if (measure && statistic !== 'count') spec.measure = measure;
    if (labChange) spec.window = reading.window ?? { days: null };
    else if (asked.target === 'previous_period') spec.window = earlier.window;
    else if (reading.window) spec.window = reading.window;
  }
  const medical = hasAny(text, MEDICAL);
  if (coaches(text) && !hasAny(text, ['what about', 'how about'])) {
    const coachedReading = {
      ...reading,
      available: reading.available.length > 0 ? reading.available : previous.available,
    };
    const coached = specFor(coachedReading, { coaching: true }) ?? spec;
    const onData = before.spec !== null || hasAny(text, DATA_WORDS) || OWN_ACTIVITY.test(text) || ownsMetric(reading);
    if (!onData) return none('coaching');
    const withContext = medical || before.pattern === 'coaching_with_context' || before.pattern === 'my_data_judged';
    return { pattern: withContext ? 'coaching_with_context' : 'coaching_on_my_data', spec: coached, missing: [] };
  }
  if (judges(text) || medical) return { pattern: 'my_data_judged', spec, missing: [] };
  if (
    before.pattern === 'coaching' &&
    (OWN_ACTIVITY.test(text) || hasAny(text, DATA_WORDS) || text.includes(' base it on '))
  ) {
    const coachedReading = {
      ...reading,
      available: reading.available.length > 0 ? reading.available : previous.available,
    };
    return { pattern: 'coaching_on_my_data', spec: specFor(coachedReading, { coaching: true }), missing: [] };
  }
  if (before.pattern === 'knowledge' || before.pattern === 'coaching') {
    return spec ? { pattern: 'my_data', spec, missing: [] } : alone;
  }
  const labs = spec !== null && reading.available.some((m) => m.source === 'labs');
  const pattern: RoutingPattern =
    before.pattern === 'my_data_judged' && (labs || reading.available.length === 0)
      ? 'my_data_judged'
      : before.pattern === 'my_data_judged'
        ? 'my_data'
        : before.pattern;
  if ((pattern === 'coaching_on_my_data' || pattern === 'coaching_with_context') && reading.available.length > 0) {
    return { pattern: 'my_data', spec, missing: [] };
  }
  return { pattern, spec, missing: [] };
}

/** Whether the last user message is an open-ended ask ("anything interesting in my sleep?"), anchored or not. */
export function asksOpenEnded(messages: readonly ConversationMessage[]): boolean {
  const last = messages.filter((m) => m.role === 'user').at(-1);
  if (!last) return false;
  const text = normaliseMessage(last.content);
  return hasAny(text, VAGUE) || OPEN_ENDED.test(text);
}
