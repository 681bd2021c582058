/**
 * The API's side of a turn's Temporal workflow: starting it (and undoing a start that failed), waiting
 * for its end, asking its progress and requesting its cancellation. The routes speak in turns; this is
 * the one place of the API that knows a turn is a workflow whose id is the turn id.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { WorkflowNotFoundError, type Client as TemporalClient, type WorkflowHandle } from '@temporalio/client';
import type { TurnProgress } from '../../contracts/turn';
import { MAX_INPUT_REQUESTS_PER_TURN } from '../../contracts/interaction-codes';
import { TURN_WORKFLOW_TYPE, progressQuery, type TurnWorkflowInput } from '../../workflows/definitions';
import type { Logger } from '../../platform/logger';
import type { WorkflowOwners } from '../../platform/temporal/workflow-owner';
import { endTurn, turnAbandoned } from '../../platform/turn-ending';
import { ApiError } from '../errors';
import { settledWithin, type PendingTurnStarts } from './pending-turn-starts';
import {
  discardQueuedTurn,
  findTurnForUser,
  getTurnForUserOrThrow,
  turnCostSoFar,
  type TurnRow,
} from '../tables/turns';

export interface TurnWorkflowsDeps {
  pool: Pool;
  temporal: TemporalClient;
  /** The owners behind `temporal`'s codec: told each new turn's user, so its start is encoded without a lookup. */
  turnOwners: Pick<WorkflowOwners, 'rememberTurnOwner'>;
  taskQueue: string;
  logger: Logger;
  /**
   * AMY_TURN_START_WAIT_MS: how long a streaming POST waits for Temporal to accept the turn's workflow
   * before it answers 201 and lets the start go on without it.
   */
  turnStartWaitMs: number;
  /** This process's starts still going after their POST was answered. */
  pendingStarts: PendingTurnStarts;
  /** AMY_TURN_RUN_TIMEOUT_SECONDS: each run of a turn's workflow is closed by Temporal past it. */
  turnRunTimeoutSeconds: number;
}

/** A GET must not hang on a busy or absent worker: past this, the turn is returned without progress. */
const PROGRESS_QUERY_TIMEOUT_MS = 1_000;
/**
 * How long a blocking replay or a cancellation looks for a workflow that the request which created its turn
 * has yet to start.
 */
const WORKFLOW_START_GRACE_MS = 10_000;

/**
 * A run's bound: AMY_TURN_RUN_TIMEOUT_SECONDS, and for a turn that may ask, as many of its waits as it may ask
 * questions on top, so that waiting for the user never counts against the time the turn has to work.
 */
const runTimeoutMs = (seconds: number, input: TurnWorkflowInput) =>
  (seconds + (input.interaction ? input.interaction.timeout_seconds * MAX_INPUT_REQUESTS_PER_TURN : 0)) * 1000;

const notStarted = () => new ApiError('service_unavailable', 'The turn could not be started; try again shortly.');

export function createTurnWorkflows(deps: TurnWorkflowsDeps) {
  const { pool, temporal, logger } = deps;

  /** Temporal's answer to the start of a turn's workflow: its handle, or the error the start ended in. */
  type StartOutcome = { handle: WorkflowHandle } | { error: unknown };

  function requestStart(input: TurnWorkflowInput): Promise<StartOutcome> {
    deps.turnOwners.rememberTurnOwner(input.turnId, input.userId);
    return temporal.workflow
      .start(TURN_WORKFLOW_TYPE, {
        workflowId: input.turnId,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowRunTimeout: runTimeoutMs(deps.turnRunTimeoutSeconds, input),
        staticSummary: `Turn: ${input.messages[input.messages.length - 1].content.slice(0, 120)}`,
      })
      .then(
        (handle) => ({ handle }),
        (error: unknown) => {
          logger.error('could not start turn workflow', { turn_id: input.turnId, error: String(error) });
          return { error };
        },
      );
  }

  /**
   * Starts the queued turn's workflow and waits for it (a blocking POST, which waits for the turn's end
   * anyway). When the start fails the client is told the turn did not start (503), so nothing of it may
   * stay in flight: see `abandonUnstartedTurn`.
   */
  async function startTurnWorkflow(
    input: TurnWorkflowInput,
  ): Promise<{ waitForEnd(signal: AbortSignal): Promise<void> }> {
    const outcome = await requestStart(input);
    if ('error' in outcome) {
      await abandonUnstartedTurn(input.turnId, 'discard');
      throw notStarted();
    }
    // The workflow's own failure is recorded on the turn row: waiting only needs its end (or the
    // caller's leaving).
    return {
      waitForEnd: (signal) =>
        temporal
          .withAbortSignal(signal, () => outcome.handle.result())
          .then(
            () => undefined,
            () => undefined,
          ),
    };
  }

  /**
   * Starts the queued turn's workflow for a streaming POST, which answers once the start has succeeded
   * (`onStarted` is called) or after `turnStartWaitMs`, whichever comes first: by default (0) at once,
   * without even a turn of the event loop. StartWorkflowExecution's latency grows with the load on
   * Temporal's cores (hundreds of milliseconds on a saturated machine, docs/benchmarks.md) and would
   * otherwise be every POST's. A start that fails within the wait is answered 503 with nothing left in
   * flight, as a blocking POST's. A start that goes on after the answer and then fails fails the turn
   * (`turn_abandoned`, on the row and its stream) rather than deleting it: the client was told 201.
   */
  async function startTurnWorkflowWithin(input: TurnWorkflowInput, onStarted: () => void): Promise<void> {
    const starting = requestStart(input);
    const early = deps.turnStartWaitMs > 0 ? await settledWithin(starting, deps.turnStartWaitMs) : null;
    if (early && 'error' in early) {
      await abandonUnstartedTurn(input.turnId, 'discard');
      throw notStarted();
    }
    if (early) {
      onStarted();
      return;
    }
    deps.pendingStarts.add(
      input.turnId,
      starting.then((outcome) => ('error' in outcome ? abandonUnstartedTurn(input.turnId, 'fail') : onStarted())),
    );
  }

  /**
   * The start can fail after Temporal accepted it (the response lost, a deadline passed), so the
   * workflow is terminated if it exists. Then, with `discard` (the client is answered 503), the bare
   * queued row is deleted; a row the workflow had already begun to write, or any row with `fail` (the
   * client was answered 201 and may be watching the turn), is failed at once, with its terminal event.
   * Whatever this cannot do (Temporal or Postgres down), the reconciler of abandoned turns finishes,
   * and the worker terminates a workflow whose row is gone (worker/turns-without-owner.ts). Never rejects.
   */
  async function abandonUnstartedTurn(turnId: string, row: 'discard' | 'fail'): Promise<void> {
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
      if (row === 'discard' && (await discardQueuedTurn(pool, turnId))) return;
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

  /**
   * The workflow's own progress plus the ledger's cost so far; null when the workflow does not answer in
   * time, or has yet to be started (`queued`: its POST was answered first, here or in another API process).
   */
  async function progressOf({ id: turnId, status }: Pick<TurnRow, 'id' | 'status'>): Promise<TurnProgress | null> {
    const handle = temporal.workflow.getHandle(turnId);
    const [steps, cost] = await Promise.all([
      temporal
        .withDeadline(Date.now() + PROGRESS_QUERY_TIMEOUT_MS, () => handle.query(progressQuery))
        .catch((err: unknown) => {
          if (err instanceof WorkflowNotFoundError && status === 'queued') return null;
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
   * second request. A turn still queued may have no workflow yet, its POST answered before the start
   * (here, or in another API process): the request waits for that start, as a blocking replay does,
   * so that the cancellation is not lost.
   */
  async function requestCancellation(userId: string, turnId: string): Promise<void> {
    const deadline = Date.now() + WORKFLOW_START_GRACE_MS;
    for (;;) {
      await deps.pendingStarts.of(turnId);
      try {
        await temporal.workflow.getHandle(turnId).cancel();
        return;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      // Still queued past the grace: its start failed, and the turn is (or will be) failed with it.
      if ((await findTurnForUser(pool, userId, turnId))?.status !== 'queued' || Date.now() >= deadline) return;
      await sleep(100);
    }
  }

  return { startTurnWorkflow, startTurnWorkflowWithin, endOfReplayedTurn, progressOf, requestCancellation };
}
