/**
 * Failures that end a turn wherever they happen, even in a step whose other failures the turn goes on without
 * (the Critic, the Assessment, the memory step): its cancellation, and a step's failure of a type that ends the
 * turn (contracts/failure-types.ts: a model call refused because the turn's user reached a cost cap, which no
 * later step could get past).
 */
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import { failureTreatment } from '../contracts/failure-types';

export function endsTheTurn(err: unknown): boolean {
  return (
    isCancellation(err) ||
    (err instanceof ActivityFailure &&
      err.cause instanceof ApplicationFailure &&
      failureTreatment(err.cause.type)?.endsTheTurn === true)
  );
}
