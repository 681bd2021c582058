/** The activity proxies the turn workflow schedules, grouped by how they fail and are retried. */
import { ActivityCancellationType, patched, type ActivityOptions } from '@temporalio/workflow';
import { NAMED_NON_RETRYABLE } from '../contracts/failure-types';
import { proxyActivitiesWithSummaries, proxyLocalActivitiesWithSummaries } from './summaries';

/** Work against our own Postgres: quick, retried until Postgres is back. */
const UNTIL_POSTGRES_IS_BACK = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '10 seconds' },
} satisfies ActivityOptions;

/** The quick bookkeeping steps on every turn's path; local activities once `bookkeepingSteps` says so. */
const LOCAL_BOOKKEEPING_STEPS = ['startTurn', 'recallMemory', 'completeTurn', 'finishDataScience'] as const;

/** Bookkeeping against our own Postgres: a turn's row, its question and answer, a Critic's fallback. */
export const bookkeeping = proxyActivitiesWithSummaries(UNTIL_POSTGRES_IS_BACK, [
  ...LOCAL_BOOKKEEPING_STEPS,
  'failTurn',
  'recordCriticFallback',
  'requestInput',
  'receiveInput',
]);

/**
 * Deterministic work of our own over the turn's rows and answer, neither a model call nor Python: the
 * Investigator's test of its hypotheses on the user's rows and the check of its briefing against the Fact Sheet.
 * What can fail is Postgres, so they are retried as bookkeeping is, until it is back.
 */
export const deterministicSteps = proxyActivitiesWithSummaries(UNTIL_POSTGRES_IS_BACK, [
  'testHypotheses',
  'checkAnswer',
]);

/**
 * The bookkeeping steps on every turn's path, run as local activities: in the worker that runs the
 * workflow task, with no task queue round trip and no ActivityTaskScheduled/Started/Completed events (one
 * MarkerRecorded event instead, carrying the same summary). Why each of these qualifies:
 * - `startTurn`, `recallMemory`, `completeTurn` and `finishDataScience` are a few Postgres statements
 *   (milliseconds), call no model and never heartbeat. They are idempotent (turn-lifecycle.ts, the event
 *   log's dedupe keys, a read), so running one again is harmless: a local activity runs again when its
 *   workflow task does (a worker crash, a task completion the server refused).
 * - Their failure class is `bookkeeping`'s: retried with the same backoff until Postgres is back (no
 *   scheduleToCloseTimeout: no limit). The backoff stays below `localRetryThreshold` (1 minute), so the
 *   retries happen inside the worker while Temporal's core keeps the workflow task alive (heartbeating
 *   it); a longer one would become a durable timer between attempts.
 * - Cancellation is requested and not waited for (TRY_CANCEL), as for the full activities they replace:
 *   a turn cancelled while it completes goes to `failTurn` at once, and the terminal transition settles
 *   the race (platform/turn-ending.ts).
 * - A failed turn is still retried from the step that failed (scripts/turn-retry.ts): those are model,
 *   sandbox and gates steps, full activities. A reset re-runs the local activities of the workflow task
 *   it resets to, which their idempotence allows.
 * What stays a full activity: every model call (long, streamed, heartbeating, retried by Temporal and
 * retryable from the Web UI), the sandbox and the gates, `testHypotheses` (computes over the user's rows),
 * `checkAnswer` (streams the checked answer), `rememberTurn` (the memory extractor's model call), and the
 * bookkeeping of failures, `failTurn` and `recordCriticFallback`: they run only when something failed, so
 * there is nothing to save on a turn's usual path, and `failTurn`'s ActivityTaskScheduled is where
 * `turn:retry` stops looking for the failed step.
 */
const localBookkeeping = proxyLocalActivitiesWithSummaries(
  { ...UNTIL_POSTGRES_IS_BACK, cancellationType: ActivityCancellationType.TRY_CANCEL },
  LOCAL_BOOKKEEPING_STEPS,
);

/**
 * Marks turns whose bookkeeping steps run as local activities. Histories recorded before (test/histories,
 * and any turn in flight across the deploy) scheduled them as full activities and replay that way.
 */
const LOCAL_BOOKKEEPING = 'bookkeeping-as-local-activities';

/**
 * The proxy for the quick bookkeeping steps: local activities, except where a history recorded before
 * replays (there they were full activities). A turn in flight across the deploy replays its earlier steps
 * as they were and runs its later ones locally (Temporal's `patched`).
 */
export function bookkeepingSteps(): typeof localBookkeeping {
  return patched(LOCAL_BOOKKEEPING) ? localBookkeeping : bookkeeping;
}

/** Model calls: retried with backoff on 529/5xx/timeouts and malformed output, up to a budget. */
export const modelSteps = proxyActivitiesWithSummaries(
  {
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '10 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 4,
      nonRetryableErrorTypes: NAMED_NON_RETRYABLE,
    },
  },
  [
    'classifyVagueness',
    'clarify',
    'route',
    'replyConversationally',
    'rephraseQuestions',
    'planAnalysis',
    'writeAnalysisCode',
    'debugAnalysisCode',
    'summariseAnalysis',
    'extractFindings',
    'reflect',
    'critiqueFinding',
    'assessFinding',
    'proposeHypotheses',
    'writeBriefing',
    'synthesise',
    'rememberTurn',
  ],
);

/**
 * Python work (a sandbox run, the gates): a failed analysis is a returned value, not an error, so a
 * retry here only covers infrastructure (a crashed gates process, Postgres); a few attempts suffice.
 */
export const computeSteps = proxyActivitiesWithSummaries(
  {
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
  },
  ['runAnalysis', 'runGates'],
);

/**
 * Multi-call agents (the Domain Expert's tool loop of up to 10 model turns, the coach's three
 * modules): one activity each, heartbeating, so the budget is the whole conversation's.
 */
export const agentSteps = proxyActivitiesWithSummaries(
  {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '10 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 3,
      nonRetryableErrorTypes: NAMED_NON_RETRYABLE,
    },
  },
  ['consultDomainExpert', 'coachUser'],
);
