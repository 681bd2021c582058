/** The activity proxies the turn workflow schedules, grouped by how they fail and are retried. */
import { proxyActivitiesWithSummaries } from './summaries';

const NON_RETRYABLE = ['UpstreamRequestError', 'TurnNotFoundError'];

/** Bookkeeping against our own Postgres: quick, retried until Postgres is back. */
export const bookkeeping = proxyActivitiesWithSummaries({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** Model calls: retried with backoff on 529/5xx/timeouts and malformed output, up to a budget. */
export const modelSteps = proxyActivitiesWithSummaries({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/**
 * Python work (a sandbox run, the gates): a failed analysis is a returned value, not an error, so a
 * retry here only covers infrastructure (a crashed gates process, Postgres); a few attempts suffice.
 */
export const computeSteps = proxyActivitiesWithSummaries({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
});

/**
 * Multi-call agents (the Domain Expert's tool loop of up to 10 model turns, the coach's three
 * modules): one activity each, heartbeating, so the budget is the whole conversation's.
 */
export const agentSteps = proxyActivitiesWithSummaries({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});
