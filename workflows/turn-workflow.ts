/**
 * One turn = one workflow (workflowId = turn id). This code only sequences activities and branches
 * on their results; every side effect lives in activities/. It must stay deterministic: no I/O,
 * clocks, randomness or Node built-ins here (enforced by lint).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  isCancellation,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { TurnActivities } from '../activities';
import type { ErrorBody, TurnErrorCode } from '../contracts/errors';
import type { TurnResult } from '../contracts/turn';
import { docsUrl } from '../contracts/docs-url';
import { progressQuery, type TurnProgress, type TurnWorkflowInput } from './definitions';

const NON_RETRYABLE = ['UpstreamRequestError', 'TurnNotFoundError'];

/** Bookkeeping against our own Postgres: quick, retried until Postgres is back. */
const bookkeeping = proxyActivities<TurnActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** Model calls: retried with backoff on 529/5xx/timeouts and malformed output, up to a budget. */
const modelSteps = proxyActivities<TurnActivities>({
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

class AgentNotAvailable extends Error {
  override name = 'AgentNotAvailableError';
}

const FAILURE_CODES: Record<string, TurnErrorCode> = {
  UpstreamUnavailableError: 'upstream_unavailable',
  ModelOutputInvalidError: 'model_output_invalid',
  AgentNotAvailableError: 'agent_not_available',
};

function turnError(err: unknown): ErrorBody {
  let code: TurnErrorCode = 'internal_error';
  let message = 'The turn failed unexpectedly.';
  if (isCancellation(err)) {
    code = 'cancelled';
    message = 'The turn was cancelled.';
  } else if (err instanceof AgentNotAvailable) {
    code = 'agent_not_available';
    message = err.message;
  } else if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      code = FAILURE_CODES[cause.type ?? ''] ?? 'internal_error';
      message = `Step ${err.activityType} failed: ${cause.message}`;
    } else if (cause instanceof TimeoutFailure) {
      code = 'upstream_unavailable';
      message = `Step ${err.activityType} timed out after its retry budget.`;
    }
  }
  // request_id is filled in by failTurn from the ledger's last failed upstream call, when there is one.
  return { code, message, request_id: '', docs_url: docsUrl(code) };
}

/** Returns the turn's result, so the Web UI shows the answer, its cost and the agents that ran. */
export async function TurnWorkflow(input: TurnWorkflowInput): Promise<TurnResult> {
  const { turnId, messages } = input;
  const progress: TurnProgress = { current_step: null, completed_steps: [] };
  setHandler(progressQuery, () => progress);

  async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
    progress.current_step = name;
    const result = await run();
    progress.completed_steps.push(name);
    progress.current_step = null;
    return result;
  }

  try {
    await step('start_turn', () => bookkeeping.startTurn({ turnId }));
    const { vagueness } = await step('classify_vagueness', () => modelSteps.classifyVagueness({ turnId, messages }));
    if (vagueness === 'high') {
      throw new AgentNotAvailable(
        'Vague questions need the Hypothesis Investigator, which this service does not run yet.',
      );
    }
    const routing = await step('route', () => modelSteps.route({ turnId, messages }));
    if (routing.main_agent === '') {
      const { answer } = await step('fallback_reply', () => modelSteps.replyConversationally({ turnId, messages }));
      return await step('complete_turn', () =>
        bookkeeping.completeTurn({
          turnId,
          answer,
          factSheet: [],
          agentsUsed: [],
          validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
        }),
      );
    }
    throw new AgentNotAvailable(`The ${routing.main_agent} is not available in this service yet.`);
  } catch (err) {
    const error = turnError(err);
    // Recording the failure must survive the cancellation that may have caused it.
    await CancellationScope.nonCancellable(() => bookkeeping.failTurn({ turnId, error }));
    throw ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true });
  }
}
