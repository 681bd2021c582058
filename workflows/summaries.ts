/**
 * One line per scheduled activity for the Temporal Web UI's event history ("summary"), so an engineer
 * opening a turn sees the pipeline — "2 · Route", "Validation · critic on ds-001" — rather than a list
 * of function names, and can pick the step to reset to. Summaries are metadata: they are not part of
 * the commands Temporal compares on replay, so histories recorded without them still replay.
 */
import { scheduleActivity, type ActivityInterfaceFor, type ActivityOptions } from '@temporalio/workflow';
import type { TurnActivities } from '../activities';

type Input = Record<string, unknown> | undefined;

const invocation = (input: Input) => (typeof input?.invocation === 'string' ? ` (${input.invocation})` : '');
const findingId = (input: Input) => {
  const finding = input?.finding as { id?: unknown } | undefined;
  return typeof finding?.id === 'string' ? finding.id : 'a finding';
};
const count = (input: Input, key: string) => (Array.isArray(input?.[key]) ? (input[key] as unknown[]).length : 0);

/** Keyed by every activity, so a new activity without a summary does not compile. */
export const ACTIVITY_SUMMARIES: Record<keyof TurnActivities, (input: Input) => string> = {
  startTurn: () => 'Start the turn',
  classifyVagueness: () => '1 · Classify vagueness',
  route: () => '2 · Route to agents',
  replyConversationally: () => 'Fallback reply (streamed)',
  rephraseQuestions: () => '3 · Rephrase the question per agent',
  recallMemory: () => 'Recall memory',
  planAnalysis: (i) => `Data Science${invocation(i)} · plan`,
  writeAnalysisCode: () => 'Data Science · write code',
  runAnalysis: () => 'Data Science · run the code in the sandbox',
  debugAnalysisCode: () => 'Data Science · debug the code',
  summariseAnalysis: () => 'Data Science · summarise the result',
  extractFindings: () => 'Data Science · extract findings',
  finishDataScience: (i) => `Data Science${invocation(i)} · done`,
  consultDomainExpert: (i) => `Domain Expert${invocation(i)}`,
  coachUser: () => 'Health Coach',
  reflect: () => 'Reflection',
  runGates: (i) => `Validation · 7 gates on ${count(i, 'findings')} finding(s)`,
  critiqueFinding: (i) => `Validation · critic on ${findingId(i)}`,
  assessFinding: (i) => `Validation · assessment of ${findingId(i)}`,
  proposeHypotheses: () => 'Investigator · propose hypotheses',
  testHypotheses: (i) => `Investigator · test ${count(i, 'hypotheses')} hypotheses`,
  writeBriefing: () => 'Investigator · write the briefing',
  synthesise: () => 'Synthesis (streamed, fact sheet)',
  checkAnswer: () => 'Synthesis · fact-check the answer',
  rememberTurn: () => 'Memory · extract and store',
  completeTurn: () => 'Complete the turn',
  failTurn: (i) => {
    const error = i?.error as { code?: unknown } | undefined;
    return `Fail the turn${typeof error?.code === 'string' ? ` (${error.code})` : ''}`;
  },
  purgeExpiredTurnEvents: () => 'Retention · purge expired turn events and idempotency keys',
};

/** Like proxyActivities, with each call's summary taken from ACTIVITY_SUMMARIES and its input. */
export function proxyActivitiesWithSummaries(options: ActivityOptions): ActivityInterfaceFor<TurnActivities> {
  return new Proxy({} as ActivityInterfaceFor<TurnActivities>, {
    get(_, activityType) {
      if (typeof activityType !== 'string') throw new TypeError('activity types are strings');
      const summarise = ACTIVITY_SUMMARIES[activityType as keyof TurnActivities];
      return (...args: unknown[]) =>
        scheduleActivity(activityType, args, { ...options, summary: summarise?.(args[0] as Input) ?? activityType });
    },
  });
}
