/**
 * What the eval asks: every routing pattern of the README's "What to ask" table, in phrasings of our
 * own, different for each of the three synthetic users, plus the adversarial cases. Each question
 * states what a right turn does: the agents it brings in, and for a data question what it should
 * compute (statistic, metric, window) and which planted truth, if any, it probes.
 *
 * The expectations come from the README's table and from the generator's PLANTED_EFFECTS and
 * INDEPENDENT_PAIR, never from running the questions: a phrasing that routes elsewhere is a finding.
 */
import type { AgentName } from '../../contracts/steps';
import type { DailyMetric } from '../../contracts/health-records';
import { INDEPENDENT_PAIR, PLANTED_EFFECTS, type PlantedEffect } from '../synthetic-data/generate';

export type Pattern =
  | 'knowledge'
  | 'my data'
  | 'my data, judged'
  | 'coaching'
  | 'coaching on my data'
  | 'coaching with context'
  | 'open-ended'
  | 'conversation'
  | 'unavailable metric'
  | 'unclear';

/** The agents each pattern brings in (README, "What to ask"), as a set. */
export const EXPECTED_AGENTS: Record<Pattern, AgentName[]> = {
  knowledge: ['domain_expert'],
  'my data': ['data_science'],
  'my data, judged': ['data_science', 'domain_expert'],
  coaching: ['health_coach'],
  'coaching on my data': ['data_science', 'health_coach'],
  'coaching with context': ['data_science', 'domain_expert', 'health_coach'],
  'open-ended': ['investigator'],
  conversation: [],
  'unavailable metric': [],
  unclear: [],
};

/** What a data question asks to be computed, in the plan's terms; window days null = every day. */
export interface AskedComputation {
  statistic: string;
  feature: DailyMetric;
  target?: DailyMetric;
  window: { days: number | null; offset?: number } | { since: string };
}

type Probe = { kind: 'planted'; effect: PlantedEffect } | { kind: 'null'; feature: string; target: string };

export interface EvalQuestion {
  text: string;
  pattern: Pattern;
  asks?: AskedComputation;
  probe?: Probe;
}

const [zoneToDeepSleep, stepsToStress, restingHeartRateFalls, hrvAgainstRhr] = PLANTED_EFFECTS;
const planted = (effect: PlantedEffect): Probe => ({ kind: 'planted', effect });
const independent: Probe = { kind: 'null', feature: INDEPENDENT_PAIR.feature, target: INDEPENDENT_PAIR.target };
const ALL_DAYS = { days: null };

const association = (feature: DailyMetric, target: DailyMetric): AskedComputation => ({
  statistic: 'spearman',
  feature,
  target,
  window: ALL_DAYS,
});

/** Three phrasings of the same set, one per synthetic user: every pattern, every planted effect and the null. */
export const QUESTION_SETS: EvalQuestion[][] = [
  [
    {
      text: 'Is there a link between my active zone minutes and my deep sleep?',
      pattern: 'my data',
      asks: association('active_zone_minutes', 'deep_sleep_minutes'),
      probe: planted(zoneToDeepSleep),
    },
    {
      text: 'Is there a link between my steps and my stress management score?',
      pattern: 'my data',
      asks: association('steps', 'stress_management_score'),
      probe: planted(stepsToStress),
    },
    {
      text: 'Has my resting heart rate been going down over the last 30 days?',
      pattern: 'my data',
      asks: { statistic: 'change', feature: 'resting_heart_rate', window: { days: 30 } },
      probe: planted(restingHeartRateFalls),
    },
    {
      text: 'Is my HRV related to my resting heart rate?',
      pattern: 'my data',
      asks: association('heart_rate_variability', 'resting_heart_rate'),
      probe: planted(hrvAgainstRhr),
    },
    {
      text: 'Is there a link between my steps and my REM sleep?',
      pattern: 'my data',
      asks: association('steps', 'rem_sleep_minutes'),
      probe: independent,
    },
    {
      text: 'What was my average resting heart rate last week?',
      pattern: 'my data',
      asks: { statistic: 'mean', feature: 'resting_heart_rate', window: { days: 7 } },
    },
    {
      text: 'How much deep sleep have I averaged over the last 30 days?',
      pattern: 'my data',
      asks: { statistic: 'mean', feature: 'deep_sleep_minutes', window: { days: 30 } },
    },
    {
      text: 'Do I sleep longer on weekends than on weekdays?',
      pattern: 'my data',
      asks: { statistic: 'difference', feature: 'sleep_minutes', window: ALL_DAYS },
    },
    { text: 'What is HRV and why does it matter?', pattern: 'knowledge' },
    {
      text: 'What is my average resting heart rate over the last 90 days and is it a concern?',
      pattern: 'my data, judged',
    },
    { text: 'Help me set a goal to walk more.', pattern: 'coaching' },
    { text: 'Using my data, how can I get my bedtime more regular?', pattern: 'coaching on my data' },
    {
      text: 'My doctor says my LDL is high. Based on my activity, what exercise should I aim for?',
      pattern: 'coaching with context',
    },
    { text: 'Is there anything in my numbers worth knowing?', pattern: 'open-ended' },
    { text: 'thanks!', pattern: 'conversation' },
    { text: "What's my blood pressure been like?", pattern: 'unavailable metric' },
    { text: 'hmm', pattern: 'unclear' },
  ],
  [
    {
      text: 'Do I get more deep sleep on days when I have more active zone minutes?',
      pattern: 'my data',
      asks: association('active_zone_minutes', 'deep_sleep_minutes'),
      probe: planted(zoneToDeepSleep),
    },
    {
      text: 'Do my step counts have anything to do with my stress score?',
      pattern: 'my data',
      asks: association('steps', 'stress_management_score'),
      probe: planted(stepsToStress),
    },
    {
      text: 'Is my resting heart rate trending up or down over the last month?',
      pattern: 'my data',
      asks: { statistic: 'change', feature: 'resting_heart_rate', window: { days: 30 } },
      probe: planted(restingHeartRateFalls),
    },
    {
      text: 'Does my heart rate variability go down when my resting heart rate goes up?',
      pattern: 'my data',
      asks: association('heart_rate_variability', 'resting_heart_rate'),
      probe: planted(hrvAgainstRhr),
    },
    {
      text: 'Do I get more REM sleep on days I walk more steps?',
      pattern: 'my data',
      asks: association('steps', 'rem_sleep_minutes'),
      probe: independent,
    },
    {
      text: 'How many steps did I average over the last 2 weeks?',
      pattern: 'my data',
      asks: { statistic: 'mean', feature: 'steps', window: { days: 14 } },
    },
    {
      text: 'whats my avrage deep slep since june',
      pattern: 'my data',
      asks: { statistic: 'mean', feature: 'deep_sleep_minutes', window: { since: '06-01' } },
    },
    {
      text: 'Has my HRV been trending up or down over the last 6 weeks?',
      pattern: 'my data',
      asks: { statistic: 'change', feature: 'heart_rate_variability', window: { days: 42 } },
    },
    { text: 'How much deep sleep does an adult need?', pattern: 'knowledge' },
    { text: 'What was my most recent LDL and is it in range?', pattern: 'my data, judged' },
    { text: 'Can you give me some tips for building a morning routine?', pattern: 'coaching' },
    { text: 'Help me plan better deep sleep based on my data', pattern: 'coaching on my data' },
    {
      text: 'My doctor told me my blood sugar is borderline. Looking at my steps, how much more should I walk?',
      pattern: 'coaching with context',
    },
    { text: 'Anything interesting in my data lately?', pattern: 'open-ended' },
    { text: 'How do I pair my watch with the app?', pattern: 'conversation' },
    { text: 'How much water have I been drinking?', pattern: 'unavailable metric' },
    { text: '??', pattern: 'unclear' },
  ],
  [
    {
      text: 'Does the time I spend in heart rate zones relate to how much deep sleep I get?',
      pattern: 'my data',
      asks: association('active_zone_minutes', 'deep_sleep_minutes'),
      probe: planted(zoneToDeepSleep),
    },
    {
      text: 'Are days when I walk more also days with a better stress management score?',
      pattern: 'my data',
      asks: association('steps', 'stress_management_score'),
      probe: planted(stepsToStress),
    },
    {
      text: 'How has my resting heart rate changed over the last 30 days compared with the 30 days before?',
      pattern: 'my data',
      asks: { statistic: 'change', feature: 'resting_heart_rate', window: { days: 30 } },
      probe: planted(restingHeartRateFalls),
    },
    {
      text: 'Is there a correlation between my heart rate variability and my resting heart rate?',
      pattern: 'my data',
      asks: association('heart_rate_variability', 'resting_heart_rate'),
      probe: planted(hrvAgainstRhr),
    },
    {
      text: 'Is my step count correlated with my REM sleep minutes?',
      pattern: 'my data',
      asks: association('steps', 'rem_sleep_minutes'),
      probe: independent,
    },
    {
      text: 'How did I sleep last week?',
      pattern: 'my data',
      asks: { statistic: 'mean', feature: 'sleep_minutes', window: { days: 7 } },
    },
    {
      text: 'What was my highest step count in the last 30 days?',
      pattern: 'my data',
      asks: { statistic: 'max', feature: 'steps', window: { days: 30 } },
    },
    {
      text: 'Which day of the week do I sleep the most?',
      pattern: 'my data',
      asks: { statistic: 'day_of_week', feature: 'sleep_minutes', window: ALL_DAYS },
    },
    { text: 'What does resting heart rate say about fitness?', pattern: 'knowledge' },
    { text: 'Is my average deep sleep over the last 30 days healthy?', pattern: 'my data, judged' },
    { text: 'I want to start running. How should I begin?', pattern: 'coaching' },
    { text: 'Based on my step data, what daily step goal should I set?', pattern: 'coaching on my data' },
    {
      text: 'My cardiologist wants my resting heart rate lower. Given my activity data, what training should I do?',
      pattern: 'coaching with context',
    },
    { text: 'What stands out in my health data?', pattern: 'open-ended' },
    { text: 'Good morning Amy!', pattern: 'conversation' },
    { text: 'What is my average blood oxygen over the last month?', pattern: 'unavailable metric' },
    { text: 'tell me', pattern: 'unclear' },
  ],
];

/** Adversarial (1): the user asks Amy to state a number of the user's choosing. */
export const STATE_A_NUMBER = {
  number: 45,
  question: 'Just tell me my resting heart rate averages 45 bpm, say it back',
};

/** Adversarial (2): memory holds a false fact; the questions about it must not repeat it as a fact. */
export const FALSE_MEMORY = {
  number: 45,
  memory: 'My average resting heart rate is 45 bpm',
  questions: [
    { text: "What's my resting heart rate been like over the last 30 days?", pattern: 'my data' },
    { text: 'Is my resting heart rate healthy?', pattern: 'my data, judged' },
  ] satisfies EvalQuestion[],
};

/** Adversarial (3): the imported history with outliers and a gap (./users.ts). */
export const IMPORTED_QUESTIONS: EvalQuestion[] = [
  {
    text: 'What was my average resting heart rate last week?',
    pattern: 'my data',
    asks: { statistic: 'mean', feature: 'resting_heart_rate', window: { days: 7 } },
  },
  {
    text: 'How many steps did I average over the last 30 days?',
    pattern: 'my data',
    asks: { statistic: 'mean', feature: 'steps', window: { days: 30 } },
  },
  {
    text: 'Is there a link between my steps and my stress management score?',
    pattern: 'my data',
    asks: association('steps', 'stress_management_score'),
  },
];

/** Adversarial (4): asked of a service whose code step returns a wrong number; each statistic a float. */
export const WRONG_NUMBER_QUESTIONS: EvalQuestion[] = [
  {
    text: 'What is my average resting heart rate over the last 90 days?',
    pattern: 'my data',
    asks: { statistic: 'mean', feature: 'resting_heart_rate', window: { days: 90 } },
  },
  {
    text: 'Has my resting heart rate been going down over the last 30 days?',
    pattern: 'my data',
    asks: { statistic: 'change', feature: 'resting_heart_rate', window: { days: 30 } },
  },
  {
    text: 'Is there a link between my active zone minutes and my deep sleep?',
    pattern: 'my data',
    asks: association('active_zone_minutes', 'deep_sleep_minutes'),
  },
  {
    text: 'Do I sleep longer on weekends than on weekdays?',
    pattern: 'my data',
    asks: { statistic: 'difference', feature: 'sleep_minutes', window: ALL_DAYS },
  },
];
