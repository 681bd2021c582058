/**
 * Every activity of a turn workflow first makes sure the turn knows which workflow run it belongs to
 * (../activities/bookkeeping/turn-attempts.ts). After a reset of a failed turn, the first activity of the new run
 * opens the turn's new attempt before it writes anything, so `turn.retried` precedes the attempt's events.
 *
 * A turn whose row does not exist (deleted, or discarded by an API whose workflow start failed after
 * Temporal had accepted it) can never be written, so no retry helps: its activities fail non-retryably,
 * and the workflow ends instead of retrying a bookkeeping step forever.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { TurnNotFoundError } from '../platform/event-log';
import { enterTurnRun } from '../activities/bookkeeping/turn-attempts';
import type { StepDeps } from '../activities';
import { TURN_WORKFLOW_TYPE } from '../workflows/definitions';

/** Runs known to be current in this process, so a run costs one query per worker, not one per activity. */
const MAX_REMEMBERED_RUNS = 10_000;

export function turnRunInterceptors(deps: Pick<StepDeps, 'pool' | 'events' | 'clock'>): ActivityInterceptorsFactory {
  const currentRuns = new Set<string>();
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const { workflowType, workflowExecution: run } = ctx.info;
        const key = run && `${run.workflowId}/${run.runId}`;
        if (run && key && workflowType === TURN_WORKFLOW_TYPE && !currentRuns.has(key)) {
          // The turn workflow's id is the turn id.
          const entry = await enterTurnRun(deps, run.workflowId, run.runId);
          if (entry === 'unknown_turn') throw turnNotFound(`turn ${run.workflowId} does not exist`);
          if (currentRuns.size >= MAX_REMEMBERED_RUNS) currentRuns.delete(currentRuns.values().next().value!);
          currentRuns.add(key);
        }
        try {
          return await next(input);
        } catch (err) {
          // The row went while the run was under way.
          if (err instanceof TurnNotFoundError) throw turnNotFound(err.message);
          throw err;
        }
      },
    },
  });
}

const turnNotFound = (message: string) => ApplicationFailure.nonRetryable(message, 'TurnNotFoundError');
