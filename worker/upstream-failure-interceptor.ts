/**
 * A failed model call leaves its activity as an ApplicationFailure of the same type (so the retry
 * policy's `nonRetryableErrorTypes` still match) that carries Anthropic's request id in its details.
 * The workflow puts that id in the failed turn's `error.request_id`: the id of the very call that
 * failed the turn, which support can look up, rather than a guess from the ledger.
 *
 * A failure that ends the turn wherever it happens (contracts/failure-types.ts: a call refused by a cost cap, which
 * holds until its window ends) leaves it non-retryable, so the turn fails at once (`cost_cap_exceeded`) rather than
 * after the step's retry budget.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { failureTreatment } from '../contracts/failure-types';
import { LlmError } from '../platform/llm/errors';

/** What the workflow reads from `ApplicationFailure.details[0]` (see workflows/turn-workflow.ts). */
interface UpstreamFailureDetails {
  request_id: string | null;
  status: number | null;
}

export const upstreamFailureInterceptors: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        if (!(err instanceof LlmError)) throw err;
        const details: UpstreamFailureDetails = { request_id: err.requestId, status: err.status };
        throw ApplicationFailure.create({
          type: err.name,
          message: err.message,
          details: [details],
          cause: err,
          nonRetryable: failureTreatment(err.name)?.endsTheTurn === true,
        });
      }
    },
  },
});
