/**
 * Failures that end a turn wherever they happen, even in a step whose other failures the turn goes on
 * without (the Critic, the Assessment, the memory step): its cancellation, and a model call refused
 * because the turn's user reached a cost cap (platform/cost-caps.ts), which no later step could get past.
 */
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';

/** The type of the ApplicationFailure a cost cap's refusal leaves its activity with (worker/upstream-failure-interceptor.ts). */
export const COST_CAP_EXCEEDED_TYPE = 'CostCapExceededError';

export function endsTheTurn(err: unknown): boolean {
  return (
    isCancellation(err) ||
    (err instanceof ActivityFailure &&
      err.cause instanceof ApplicationFailure &&
      err.cause.type === COST_CAP_EXCEEDED_TYPE)
  );
}
