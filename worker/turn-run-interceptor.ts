/**
 * What every activity passes before it runs, whoever started its workflow (the API, or anyone who reaches
 * Temporal's port: the Web UI, the CLI):
 *
 * 1. **Its workflow runs under an id of its type** (platform/temporal/service-workflows.ts): a turn's workflow on
 *    a turn id, a service workflow on its own form. The payload codec knows a workflow by its id only, so a
 *    turn's workflow on a service workflow's id (whose payloads stay plain) is refused here.
 * 2. **A turn's activity acts for the turn's owner only**: the `turnId` of its input must be its workflow's, and
 *    the `userId` the turn row's user. The memory, health-data and hypothesis steps read and write by `userId`,
 *    so an input naming another user is refused before a step reads or writes anything. The owner is the
 *    codec's lookup (one per turn and process, platform/temporal/workflow-owner.ts): no statement of its own.
 * 3. **The turn knows which workflow run it belongs to** (../activities/bookkeeping/turn-attempts.ts). After a
 *    reset of a failed turn, the first activity of the new run opens the turn's new attempt before it writes
 *    anything, so `turn.retried` precedes the attempt's events.
 *
 * A turn whose row does not exist (deleted, or discarded by an API whose workflow start failed after
 * Temporal had accepted it) can never be written, so no retry helps: its activities fail non-retryably
 * (and the codec has its workflow terminated: ./turns-without-owner.ts). Every refusal is non-retryable too:
 * what an activity is given does not change on a retry.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { FailureType } from '../contracts/failure-types';
import { TurnNotFoundError } from '../platform/event-log';
import { workflowIdFitsType } from '../platform/temporal/service-workflows';
import type { WorkflowOwners } from '../platform/temporal/workflow-owner';
import { enterTurnRun } from '../activities/bookkeeping/turn-attempts';
import type { StepDeps } from '../activities';
import { TURN_WORKFLOW_TYPE } from '../workflows/definitions';

/** Runs known to be current in this process, so a run costs one query per worker, not one per activity. */
const MAX_REMEMBERED_RUNS = 10_000;

/** What an activity's input says it acts on: the turn and the user, when it names them. */
function claimsOf(args: unknown[]): { turnId?: unknown; userId?: unknown } {
  const first = args[0];
  return first !== null && typeof first === 'object' ? (first as { turnId?: unknown; userId?: unknown }) : {};
}

export function turnRunInterceptors(
  deps: Pick<StepDeps, 'pool' | 'events' | 'clock'> & { turnOwners: WorkflowOwners },
): ActivityInterceptorsFactory {
  const currentRuns = new Set<string>();
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const { workflowType, workflowExecution: run, activityType } = ctx.info;
        if (run && !workflowIdFitsType(workflowType ?? '', run.workflowId)) {
          throw refused(`a ${workflowType} workflow does not run under id ${run.workflowId}`, 'WorkflowIdRefusedError');
        }
        if (run && workflowType === TURN_WORKFLOW_TYPE) {
          const owner = await deps.turnOwners.ownerOf(run.workflowId);
          if (typeof owner !== 'object') throw turnNotFound(`turn ${run.workflowId} does not exist`);
          const { turnId, userId } = claimsOf(input.args);
          if (turnId !== undefined && turnId !== run.workflowId) {
            throw refused(`${activityType} of turn ${run.workflowId} names another turn`, 'TurnOwnerMismatchError');
          }
          if (userId !== undefined && userId !== owner.userId) {
            throw refused(
              `${activityType} of turn ${run.workflowId} names a user not the turn's`,
              'TurnOwnerMismatchError',
            );
          }
        }
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

const turnNotFound = (message: string) =>
  ApplicationFailure.nonRetryable(message, 'TurnNotFoundError' satisfies FailureType);
const refused = (message: string, type: string) => ApplicationFailure.nonRetryable(message, type);
