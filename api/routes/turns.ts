import { setTimeout as sleep } from 'node:timers/promises';
import { Router, type Request } from 'express';
import type { Pool } from 'pg';
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import { isTurnId } from '../../contracts/ids';
import { createTurnRequestSchema, type Turn, type TurnProgress } from '../../contracts/turn';
import { TURN_WORKFLOW_TYPE, progressQuery, type TurnWorkflowInput } from '../../workflows/definitions';
import { endTurn, turnAbandoned } from '../../platform/turn-ending';
import { ROUTES } from '../contract';
import { ApiError, notFound } from '../errors';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  hashCreateTurnRequest,
  parseIdempotencyKey,
} from '../idempotency';
import type { Logger } from '../../platform/logger';
import {
  createQueuedTurn,
  discardQueuedTurn,
  findTurnForUser,
  getTurnForUserOrThrow,
  isTurnInFlight,
  listTurnsForUser,
  toTurnResource,
  turnCostSoFar,
  type TurnRow,
} from '../services/turns';
import { parseRequest } from '../parse-request';

export interface TurnRoutesDeps {
  pool: Pool;
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
  maxInFlightTurns: number;
  /** AMY_TURN_RUN_TIMEOUT_SECONDS: each run of a turn's workflow is closed by Temporal past it. */
  turnRunTimeoutSeconds: number;
}

/** A GET must not hang on a busy or absent worker: past this, the turn is returned without progress. */
const PROGRESS_QUERY_TIMEOUT_MS = 1_000;
/** How long a blocking replay looks for a workflow that the request holding its key has yet to start. */
const WORKFLOW_START_GRACE_MS = 10_000;

const notStarted = () => new ApiError('service_unavailable', 'The turn could not be started; try again shortly.');

const turnIdFrom = (req: Request) => {
  const id = String(req.params.id);
  if (!isTurnId(id)) throw notFound('Turn');
  return id;
};

export function turnRoutes(deps: TurnRoutesDeps): Router {
  const { pool, temporal, logger } = deps;
  const router = Router();

  router.post('/v1/turns', async (req, res) => {
    if (!req.is('application/json')) {
      throw new ApiError(
        'unsupported_media_type',
        'Send the request body as JSON with Content-Type: application/json.',
      );
    }
    const idempotencyKey = parseIdempotencyKey(req.get(IDEMPOTENCY_KEY_HEADER));
    const body = parseRequest(ROUTES.createTurn.body, req.body ?? {}, 'body') as ReturnType<
      typeof createTurnRequestSchema.parse
    >;
    if (body.messages[body.messages.length - 1].role !== 'user') {
      throw new ApiError('invalid_request', 'The last message must be from the user.', 'messages');
    }
    const userId = res.locals.userId as string;
    const { turn, replayed } = await createQueuedTurn(pool, {
      userId,
      messages: body.messages,
      context: body.context,
      maxInFlight: deps.maxInFlightTurns,
      idempotency:
        idempotencyKey === undefined ? undefined : { key: idempotencyKey, requestHash: hashCreateTurnRequest(body) },
    });
    if (replayed) {
      // The request that created the turn started its workflow; this one answers as that one did.
      logger.info('turn request replayed', { turn_id: turn.id, request_id: res.locals.requestId, stream: body.stream });
      res.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      if (body.stream) {
        res.status(201).json(toTurnResource(turn));
        return;
      }
      res.status(200).json(toTurnResource(await endOfReplayedTurn(userId, turn.id)));
      return;
    }
    const input: TurnWorkflowInput = { turnId: turn.id, userId, messages: body.messages, context: body.context };
    let handle;
    try {
      handle = await temporal.workflow.start(TURN_WORKFLOW_TYPE, {
        workflowId: turn.id,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowRunTimeout: deps.turnRunTimeoutSeconds * 1000,
        staticSummary: `Turn: ${body.messages[body.messages.length - 1].content.slice(0, 120)}`,
      });
    } catch (err) {
      logger.error('could not start turn workflow', { turn_id: turn.id, error: String(err) });
      await abandonUnstartedTurn(turn.id);
      throw notStarted();
    }
    logger.info('turn started', { turn_id: turn.id, request_id: res.locals.requestId, stream: body.stream });
    if (body.stream) {
      res.status(201).json(toTurnResource(turn));
      return;
    }
    // Blocking mode: the workflow's own failure is recorded on the turn row; we only wait for the end.
    await handle.result().catch(() => undefined);
    res.status(200).json(toTurnResource(await getTurnForUserOrThrow(pool, userId, turn.id)));
  });

  /**
   * The client is told the turn did not start, so nothing of it may stay in flight. The start can fail
   * after Temporal accepted it (the response lost, a deadline passed), so the workflow is terminated
   * if it exists; the bare queued row is deleted; a row the workflow had already begun to write is
   * failed at once, with its terminal event. Whatever this cannot do (Temporal or Postgres down), the
   * reconciler of abandoned turns finishes, and a workflow whose row is gone fails at its first step.
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
   * start failed, and the turn was discarded) gets the original's answer: 503.
   */
  async function endOfReplayedTurn(userId: string, turnId: string): Promise<TurnRow> {
    const deadline = Date.now() + WORKFLOW_START_GRACE_MS;
    for (;;) {
      try {
        await temporal.workflow.getHandle(turnId).result();
      } catch (err) {
        // Any other error is the workflow's own failure, recorded on the turn row.
        if (err instanceof WorkflowNotFoundError) {
          const row = await findTurnForUser(pool, userId, turnId);
          if (!row) throw notStarted();
          if (row.status === 'queued') {
            if (Date.now() >= deadline) throw notStarted();
            await sleep(100);
            continue;
          }
          // Ended so long ago that Temporal no longer keeps the workflow: the row has the outcome.
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

  router.get('/v1/turns', async (req, res) => {
    const query = parseRequest(ROUTES.listTurns.query, req.query, 'query');
    res.json(await listTurnsForUser(pool, res.locals.userId as string, query));
  });

  router.get('/v1/turns/:id', async (req, res) => {
    const row = await getTurnForUserOrThrow(pool, res.locals.userId as string, turnIdFrom(req));
    const turn: Turn = toTurnResource(row);
    if (isTurnInFlight(row)) {
      const progress = await progressOf(row.id);
      if (progress) turn.progress = progress;
    }
    res.json(turn);
  });

  /**
   * Cancellation is a request: the workflow records the turn as failed with code `cancelled` and
   * appends its `turn.failed` event. Hence 202 with the turn as it stands while it is still in flight,
   * and 200 with the turn unchanged once it has ended (cancelling a finished turn is a no-op). Repeats
   * get the same answer; Temporal ignores a second cancellation request.
   */
  router.post('/v1/turns/:id/cancel', async (req, res) => {
    const userId = res.locals.userId as string;
    let row: TurnRow = await getTurnForUserOrThrow(pool, userId, turnIdFrom(req));
    if (isTurnInFlight(row)) {
      try {
        await temporal.workflow.getHandle(row.id).cancel();
        logger.info('turn cancellation requested', { turn_id: row.id, request_id: res.locals.requestId });
      } catch (err) {
        // The workflow closed between our read and the request: its ending is already on the row.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      row = await getTurnForUserOrThrow(pool, userId, row.id);
    }
    res.status(isTurnInFlight(row) ? 202 : 200).json(toTurnResource(row));
  });

  return router;
}
