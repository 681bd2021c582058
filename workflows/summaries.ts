/**
 * One line per scheduled activity for the Temporal Web UI's event history ("summary"), so an engineer
 * opening a turn sees the pipeline numbered 0 to 8 (docs/design.md#the-pipeline) — "1b · Route to agents",
 * "6 · Validation · critic on ds-001" — rather than a list of function names, and can pick the step to
 * reset to. Summaries are metadata: they are not part of the commands Temporal compares on replay, so
 * histories recorded without them still replay.
 */
import {
  ActivityFailure,
  isCancellation,
  scheduleActivity,
  scheduleLocalActivity,
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { RetryState } from '@temporalio/common';
import type { TurnActivities } from '../activities';
import { INVOCATIONS, numberedLabel, type Invocation, type StepId } from '../contracts/steps';

type ActivityName = keyof TurnActivities;
type Input = Record<string, unknown> | undefined;

/**
 * The step each activity runs (contracts/steps.ts). Keyed by every activity, so a new activity without
 * a step does not compile. Activity types are not renamed to match: recorded histories name them.
 */
export const ACTIVITY_STEPS: Record<ActivityName, StepId> = {
  startTurn: 'start_turn',
  classifyVagueness: 'classify_vagueness',
  clarify: 'clarify',
  route: 'route',
  replyConversationally: 'fallback_reply',
  rephraseQuestions: 'rephrase',
  recallMemory: 'recall_memory',
  planAnalysis: 'ds_plan',
  writeAnalysisCode: 'ds_code',
  runAnalysis: 'ds_run',
  debugAnalysisCode: 'ds_debug',
  summariseAnalysis: 'ds_summary',
  extractFindings: 'ds_extract',
  finishDataScience: 'ds_finish',
  consultDomainExpert: 'domain_expert',
  coachUser: 'health_coach',
  reflect: 'reflection',
  runGates: 'gates',
  critiqueFinding: 'critic',
  recordCriticFallback: 'critic_fallback',
  assessFinding: 'assessment',
  proposeHypotheses: 'investigator_hypotheses',
  testHypotheses: 'investigator_test',
  writeBriefing: 'investigator_briefing',
  synthesise: 'synthesis',
  checkAnswer: 'fact_check',
  rememberTurn: 'memory',
  requestInput: 'ask_user',
  receiveInput: 'take_answer',
  completeTurn: 'complete_turn',
  failTurn: 'fail_turn',
  purgeExpiredTurnEvents: 'retention',
  reconcileAbandonedTurns: 'reconcile',
};

const findingId = (input: Input) => {
  const finding = input?.finding as { id?: unknown } | undefined;
  const id = finding?.id ?? input?.findingId;
  return typeof id === 'string' ? id : 'a finding';
};
const count = (input: Input, key: string) => (Array.isArray(input?.[key]) ? (input[key] as unknown[]).length : 0);

/** What a summary adds to its step's label, from the activity's input. */
const DETAILS: Partial<Record<ActivityName, (input: Input) => string>> = {
  runGates: (i) => `on ${count(i, 'findings')} finding(s)`,
  critiqueFinding: (i) => `on ${findingId(i)}`,
  recordCriticFallback: (i) => `on ${findingId(i)}`,
  assessFinding: (i) => `of ${findingId(i)}`,
  testHypotheses: (i) => `(${count(i, 'hypotheses')})`,
  failTurn: (i) => {
    const error = i?.error as { code?: unknown } | undefined;
    return typeof error?.code === 'string' ? `(${error.code})` : '';
  },
};

const invocationOf = (input: Input): Invocation | undefined =>
  INVOCATIONS.find((invocation) => invocation === input?.invocation);

/** `<step number> · <step label>[ (<invocation>)][ <detail>]`, e.g. `3 · Data Science · plan (supporting)`. */
export function activitySummary(activity: ActivityName, input: Input): string {
  const invocation = invocationOf(input);
  const detail = DETAILS[activity]?.(input) ?? '';
  return [numberedLabel(ACTIVITY_STEPS[activity], invocation), invocation && `(${invocation})`, detail]
    .filter(Boolean)
    .join(' ');
}

/** The summary of a call of `activityType` with `args`: its step's label, or its bare name for one with no step. */
const summaryOf = (activityType: string, args: unknown[]) =>
  Object.hasOwn(ACTIVITY_STEPS, activityType)
    ? activitySummary(activityType as ActivityName, args[0] as Input)
    : activityType;

/** The activity `activityType` names, when it is one of `names`: a proxy group runs its own activities only. */
function listedActivity<N extends ActivityName>(names: readonly N[], activityType: string | symbol, group: string): N {
  if (typeof activityType !== 'string' || !names.includes(activityType as N)) {
    throw new TypeError(`${String(activityType)} is not run ${group}`);
  }
  return activityType as N;
}

/**
 * Like proxyActivities, with each call's summary naming its step (activitySummary). Typed to the activities
 * `names` lists, so a step cannot be run with another group's timeouts and retries by mistake.
 */
export function proxyActivitiesWithSummaries<N extends ActivityName>(
  options: ActivityOptions,
  names: readonly N[],
): ActivityInterfaceFor<Pick<TurnActivities, N>> {
  return new Proxy({} as ActivityInterfaceFor<Pick<TurnActivities, N>>, {
    get(_, property) {
      const activityType = listedActivity(names, property, 'with these options');
      return (...args: unknown[]) =>
        scheduleActivity(activityType, args, { ...options, summary: summaryOf(activityType, args) });
    },
  });
}

/**
 * Like proxyLocalActivities, with the same summaries: the Web UI shows them on the local activity's
 * MarkerRecorded event. Typed to the activities `names` lists, so a step that must stay a full activity
 * (a model call, the sandbox, the gates) cannot be run locally by mistake.
 */
export function proxyLocalActivitiesWithSummaries<N extends ActivityName>(
  options: LocalActivityOptions,
  names: readonly N[],
): ActivityInterfaceFor<Pick<TurnActivities, N>> {
  return new Proxy({} as ActivityInterfaceFor<Pick<TurnActivities, N>>, {
    get(_, property) {
      const activityType = listedActivity(names, property, 'as a local activity');
      return async (...args: unknown[]) => {
        try {
          return await scheduleLocalActivity(activityType, args, {
            ...options,
            summary: summaryOf(activityType, args),
          });
        } catch (err) {
          // A local activity's failure reaches the workflow as the activity's own error; wrapped as a full
          // activity's is, the turn's failure names the step as before (turn-workflow.ts `turnError`).
          if (err instanceof ActivityFailure || isCancellation(err) || !(err instanceof Error)) throw err;
          throw new ActivityFailure(
            err.message,
            activityType,
            undefined,
            RetryState.NON_RETRYABLE_FAILURE,
            undefined,
            err,
          );
        }
      };
    },
  });
}
