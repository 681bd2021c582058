import { lastUserMessage } from '../../../contracts/last-user-message';
import type { PersonalAnchor } from '../../../activities/agents/health-coach/anchors';
import type { ShownFinding } from '../../../activities/agents/health-coach/types';
import type { ScriptedRule } from '../types';

/**
 * The Health Coach's model calls (docs/design.md#health-coach), answered from each call's inputs:
 * - health_coach.gate: YESREC when the question asks for a plan, a goal, advice or help; NOREC otherwise;
 * - health_coach.main: cites the anchor for the metric the question names (else the first) exactly as
 *   the prompt lists it, builds on the top finding's strategy, gives one SMART recommendation (YESREC)
 *   or asks one focused question (NOREC), and ends with a forward question;
 * - health_coach.finish: FINISH only when the user's last message wraps up;
 * - health_coach.summary: one sentence, no numbers.
 */

/** Free text on one line, as the prompt shows it. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** An anchor's value and unit as the prompt lists them (`401 min`). */
const stated = (anchor: PersonalAnchor) => `${anchor.value}${anchor.unit ? ` ${anchor.unit}` : ''}`;

/** The first finding's strategy, if it has one. */
function topStrategy(findings: ShownFinding[]): string | null {
  const strategy = findings[0]?.assessment?.strategy;
  return strategy ? oneLine(strategy) : null;
}

/** Metrics as a question names them; the more specific names first ("deep sleep" before "sleep"). */
const METRIC_WORDS: ReadonlyArray<[string, RegExp]> = [
  ['deep_sleep_minutes', /\bdeep sleep\b/],
  ['heart_rate_variability', /\b(hrv|heart rate variability)\b/],
  ['resting_heart_rate', /\b(resting heart rate|rhr|heart rate)\b/],
  ['active_zone_minutes', /\b(active zone|exercise|workouts?|training|cardio)\b/],
  ['steps', /\b(steps?|walk(s|ing)?)\b/],
  ['sleep_minutes', /\b(sleep|slept|bedtime)\b/],
];

/** The metric's own mean anchor, else any of its anchors, else the first anchor. */
function relevantAnchor(question: string, anchors: PersonalAnchor[]): PersonalAnchor | undefined {
  const metric = METRIC_WORDS.find(([, words]) => words.test(question))?.[0];
  const own = metric ? anchors.filter((a) => a.key.startsWith(`${metric}_`)) : [];
  return own.find((a) => a.key.includes('_mean_')) ?? own[0] ?? anchors[0];
}

const SMART_GOALS: Record<string, string> = {
  sleep_minutes:
    'for the next two weeks, start winding down at a fixed time and have lights out half an hour earlier on weeknights',
  deep_sleep_minutes:
    'for the next two weeks, keep the same bedtime every night and skip alcohol within three hours of it',
  steps: 'for the next two weeks, add a brisk walk after lunch on weekdays and log each one',
  active_zone_minutes:
    'for the next two weeks, book two brisk cardio sessions a week in your calendar, each ending well before bed',
  resting_heart_rate: 'for the next two weeks, keep three easy cardio sessions a week and an even bedtime',
  heart_rate_variability: 'for the next two weeks, keep a fixed wake-up time and a short wind-down routine each night',
};

const FOCUSED_QUESTIONS: Record<string, string> = {
  sleep_minutes: 'What usually happens on the nights you get the least sleep?',
  deep_sleep_minutes: 'What does your evening look like in the two hours before bed?',
  steps: 'What does a typical low-step day look like for you?',
  active_zone_minutes: 'What kind of movement do you actually enjoy, and when in the week could it fit?',
  resting_heart_rate: 'What has changed in your training or stress lately?',
  heart_rate_variability: 'How have your sleep and stress been over these two weeks?',
};

const metricOf = (anchor: PersonalAnchor | undefined) =>
  anchor ? (Object.keys(SMART_GOALS).find((m) => anchor.key.startsWith(`${m}_`)) ?? 'sleep_minutes') : null;

const USER_WRAP_UP = /\b(thanks|thank you|that's all|that is all|that's it|bye|goodbye)\b/i;

const asked = (question: string) => question.trim().toLowerCase();

export const healthCoachGate: ScriptedRule<'health_coach.gate'> = {
  step: 'health_coach.gate',
  respond(req) {
    const asks = /\b(help me|plan|goals?|advice|advise|how (can|do|should) i improve)\b/.test(
      asked(req.inputs.question),
    );
    return { text: `[VERDICT]: ${asks ? 'YESREC' : 'NOREC'}` };
  },
};

export const healthCoachMain: ScriptedRule<'health_coach.main'> = {
  step: 'health_coach.main',
  respond(req) {
    const recommend = req.inputs.verdict === 'YESREC';
    const anchor = relevantAnchor(asked(req.inputs.question), req.inputs.anchors);
    const metric = metricOf(anchor);
    const strategy = topStrategy(req.inputs.findings);
    const parts = [
      anchor
        ? `Looking at your own data, your ${anchor.label} was ${stated(anchor)} (${anchor.window}).`
        : "I don't have enough recent data from you to go on yet, so let's start from how things feel.",
    ];
    if (strategy) parts.push(`Your data also points to a lever: ${strategy}`);
    if (recommend) {
      parts.push(`Here is one SMART goal: ${SMART_GOALS[metric ?? 'sleep_minutes']}.`);
      parts.push('Which day this week will you start, and what might get in the way?');
    } else {
      parts.push(
        `Before I suggest anything, I'd like to understand more. ${FOCUSED_QUESTIONS[metric ?? 'sleep_minutes']}`,
      );
    }
    return { text: parts.join(' ') };
  },
};

export const healthCoachFinish: ScriptedRule<'health_coach.finish'> = {
  step: 'health_coach.finish',
  respond(req) {
    return { text: USER_WRAP_UP.test(lastUserMessage(req.inputs.messages)) ? 'FINISH' : 'CONTINUE' };
  },
};

export const healthCoachSummary: ScriptedRule<'health_coach.summary'> = {
  step: 'health_coach.summary',
  respond() {
    return {
      text: 'To sum up: we looked at your own numbers together and settled on one next step; check back in and tell me how it went.',
    };
  },
};

export const healthCoachRules: ScriptedRule[] = [
  healthCoachGate,
  healthCoachMain,
  healthCoachFinish,
  healthCoachSummary,
];
