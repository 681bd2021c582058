/**
 * What a failed turn tells its client: the workflow turns whatever ended the turn into one of the turn error
 * codes (contracts/errors.ts `TURN_ERROR_CODES`), every one of them but `turn_abandoned`, which the
 * reconciler and the API's start of a turn write (platform/turn-ending.ts). A failure of a type the workflow
 * tells apart gets its type's code (contracts/failure-types.ts). Apart from the workflow so that a
 * unit test can run each kind of failure through it and hold the OpenAPI document's enum to what comes out
 * (test/unit/openapi-turn-errors.test.ts).
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure, isCancellation } from '@temporalio/workflow';
import { docsUrl } from '../contracts/docs-url';
import type { TurnErrorBody, TurnErrorCode } from '../contracts/errors';
import { FAILURE_TYPES, failureTreatment } from '../contracts/failure-types';
import { INPUT_EXPIRED_TYPE } from '../contracts/interaction-codes';

export function turnError(err: unknown): TurnErrorBody {
  let code: TurnErrorCode = 'internal_error';
  let message = 'The turn failed unexpectedly.';
  let requestId = '';
  if (isCancellation(err)) {
    code = 'cancelled';
    message = 'The turn was cancelled.';
  } else if (err instanceof ApplicationFailure && err.type === INPUT_EXPIRED_TYPE) {
    // The turn asked, its request said to fail at the deadline, and no answer came.
    code = FAILURE_TYPES[INPUT_EXPIRED_TYPE].turnError;
    message = err.message;
  } else if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      code = failureTreatment(cause.type)?.turnError ?? 'internal_error';
      message = `Step ${err.activityType} failed: ${cause.message}`;
      requestId = requestIdOf(cause.details?.[0]);
    } else if (cause instanceof TimeoutFailure) {
      code = 'upstream_unavailable';
      message = `Step ${err.activityType} timed out after its retry budget.`;
    }
  }
  // The failed model call's own request id when there was one (worker/upstream-failure-interceptor.ts);
  // otherwise failTurn falls back to the ledger's last failed call, or a new id.
  return { code, message, request_id: requestId, docs_url: docsUrl(code) };
}

/**
 * What the user sees of a failure: for an unexpected one (`internal_error`), the step and nothing of
 * the cause, which may be a driver's message or a file path. The cause stays in the workflow's own
 * failure (the Temporal Web UI) and the worker's log, where engineers look.
 */
export function publicTurnError(error: TurnErrorBody): TurnErrorBody {
  if (error.code !== 'internal_error') return error;
  const step = /^Step (\w+) failed/.exec(error.message)?.[1];
  return {
    ...error,
    message: step ? `Step ${step} failed unexpectedly.` : 'The turn failed unexpectedly.',
  };
}

const requestIdOf = (details: unknown): string => {
  const id = (details as { request_id?: unknown } | undefined)?.request_id;
  return typeof id === 'string' ? id : '';
};
