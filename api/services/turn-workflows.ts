/**
 * The API's side of a turn's Temporal workflow: starting it (and undoing a start that failed), waiting
 * for its end, asking its progress and requesting its cancellation. The routes speak in turns; this is
 * the one place of the API that knows a turn is a workflow whose id is the turn id.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { TurnProgress } from '../../contracts/turn';
import { TURN_WORKFLOW_TYPE, progressQuery, type TurnWorkflowInput } from '../../workflows/definitions';
import type { Logger } from '../../platform/logger';
import type { WorkflowOwners } from '../../platform/temporal/workflow-owner';
import { endTurn, turnAbandoned } from '../../platform/turn-ending';
import { ApiError } from '../errors';
import { discardQueuedTurn, findTurnForUser, getTurnForUserOrThrow, turnCostSoFar, type TurnRow } from './turns';

export interface TurnWorkflowsDeps {
  pool: Pool;
  temporal: TemporalClient;
  /** The owners behind `temporal`'s codec: told each new turn's user, so its start is encoded without a lookup. */
  turnOwners: Pick<WorkflowOwners, 'rememberTurnOwner'>;
  taskQueue: string;
  logger: Logger;
  /** AMY_TURN_RUN_TIMEOUT_SECONDS: each run of a turn's workflow is closed by Temporal past it. */
  turnRunTimeoutSeconds: number;
}

/** A GET must not hang on a busy or absent worker: past this, the turn is returned without progress. */
const PROGRESS_QUERY_TIMEOUT_MS = 1_000;
/** How long a blocking replay looks for a workflow that the request holding its key has yet to start. */
const WORKFLOW_START_GRACE_MS = 10_000;

const notStarted = () => new ApiError('service_unavailable', 'The turn could not be started; try again shortly.');

export function createTurnWorkflows(deps: TurnWorkflowsDeps) {
  const { pool, temporal, logger } = deps;

  /**
   * Starts the queued turn's workflow. When that fails the client is told the turn did not start
   * (503), so nothing of it may stay in flight: see `abandonUnstartedTurn`.
   */
  async function startTurnWorkflow(
    input: TurnWorkflowInput,
  ): Promise<{ waitForEnd(signal: AbortSignal): Promise<void> }> {
    deps.turnOwners.rememberTurnOwner(input.turnId, input.userId);
    try {
      const handle = await temporal.workflow.start(TURN_WORKFLOW_TYPE, {
        workflowId: input.turnId,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowRunTimeout: deps.turnRunTimeoutSeconds * 1000,
        staticSummary: `Turn: ${input.messages[input.messages.length - 1].content.slice(0, 120)}`,
      });
      // The workflow's own failure is recorded on the turn row: waiting only needs its end (or the
      // caller's leaving).
      return {
        waitForEnd: (signal) =>
          temporal
            .withAbortSignal(signal, () => handle.result())
            .then(
              () => undefined,
              () => undefined,
            ),
      };
    } catch (err) {
      logger.error('could not start turn workflow', { turn_id: input.turnId, error: String(err) });
      await abandonUnstartedTurn(input.turnId);
      throw notStarted();
    }
  }

  /**
   * The start can fail after Temporal accepted it (the response lost, a deadline passed), so the
   * workflow is terminated if it exists; the bare queued row is deleted; a row the workflow had already
   * begun to write is failed at once, with its terminal event. Whatever this cannot do (Temporal or
   * Postgres down), the reconciler of abandoned turns finishes, and a workflow whose row is gone fails
   * at its first step.
   */
  async function abandonUnstartedTurn(turnId: string): Promise<void> {
    try {
      await temporal.workflow.getHandle(turnId).terminate('the API reported its start as failed');
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) {
        logger.warn('could not terminate the workflow of a turn that did not start', {
          turn_id: turnId,
          error: String(err),
        });
      }
    }
    try {
      if (await discardQueuedTurn(pool, turnId)) return;
      await endTurn(
        pool,
        turnId,
        { status: 'failed', error: turnAbandoned('The turn could not be started.') },
        new Date(),
      );
    } catch (err) {
      logger.warn('could not discard a turn that did not start; the reconciler will fail it', {
        turn_id: turnId,
        error: String(err),
      });
    }
  }

  /**
   * A blocking replay waits for the turn's end like the original request. It can arrive before that
   * request has started the workflow (between its commit and `workflow.start`), so while the turn is
   * still queued a workflow not found is looked for again. A turn whose workflow never came (its
   * start failed, and the turn was discarded) gets the original's answer: 503. Null once `signal` is
   * aborted (the client left): nobody is waiting any more.
   */
  async function endOfReplayedTurn(userId: string, turnId: string, signal: AbortSignal): Promise<TurnRow | null> {
    const deadline = Date.now() + WORKFLOW_START_GRACE_MS;
    for (;;) {
      try {
        await temporal.withAbortSignal(signal, () => temporal.workflow.getHandle(turnId).result());
      } catch (err) {
        if (signal.aborted) return null;
        // Any other error is the workflow's own failure, recorded on the turn row.
        if (err instanceof WorkflowNotFoundError) {
          const row = await findTurnForUser(pool, userId, turnId);
          if (!row) throw notStarted();
          if (row.status === 'queued') {
            if (Date.now() >= deadline) throw notStarted();
            await sleep(100);
            if (signal.aborted) return null;
            continue;
          }
          // Ended so long ago that Temporal keeps the workflow no more: the row has the outcome.
          return row;
        }
      }
      return getTurnForUserOrThrow(pool, userId, turnId);
    }
  }

  /** The workflow's own progress plus the ledger's cost so far; null when the workflow does not answer in time. */
  async function progressOf(turnId: string): Promise<TurnProgress | null> {
    const handle = temporal.workflow.getHandle(turnId);
    const [steps, cost] = await Promise.all([
      temporal
        .withDeadline(Date.now() + PROGRESS_QUERY_TIMEOUT_MS, () => handle.query(progressQuery))
        .catch((err: unknown) => {
          logger.warn('progress query failed; the turn is returned without progress', {
            turn_id: turnId,
            error: String(err),
          });
          return null;
        }),
      turnCostSoFar(pool, turnId),
    ]);
    if (!steps) return null;
    return {
      current_step: steps.current_step,
      completed_steps: steps.completed_steps,
      agents_started: steps.agents_started,
      cost_usd_so_far: cost,
    };
  }

  /**
   * Asks the workflow to cancel; it records the turn as failed with code `cancelled`. A workflow that
   * closed since the caller read the row has its ending on the row already, and Temporal ignores a
   * second request.
   */
  async function requestCancellation(turnId: string): Promise<void> {
    try {
      await temporal.workflow.getHandle(turnId).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }

  return { startTurnWorkflow, endOfReplayedTurn, progressOf, requestCancellation };
}
