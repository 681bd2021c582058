import { Router, type Request, type Response } from 'express';
import { isTurnId } from '../../contracts/ids';
import { createTurnRequestSchema, type Turn } from '../../contracts/turn';
import { ROUTES } from '../route-table';
import { ApiError, notFound } from '../errors';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  MAX_WAITING_REPLAYS_PER_KEY,
  hashCreateTurnRequest,
  idempotencyKeyInUse,
  parseIdempotencyKey,
} from '../idempotency';
import { createKeyedSlots } from '../keyed-slots';
import {
  createQueuedTurn,
  getTurnForUserOrThrow,
  isTurnInFlight,
  listTurnsForUser,
  toTurnResource,
  type TurnRow,
} from '../tables/turns';
import { conversationWindow } from '../temporal/conversation-window';
import { answerTurnInput } from '../temporal/turn-input';
import { createTurnWorkflows, type TurnWorkflowsDeps } from '../temporal/turn-workflows';
import { parseRequest } from '../parse-request';
import type { CostCapDefaults } from '../../platform/cost-caps';
import { tagTurn, traceLogFields } from '../../platform/spans';

export interface TurnRoutesDeps extends TurnWorkflowsDeps {
  maxInFlightTurns: number;
  /** AMY_USER_DAILY_CAP_USD / AMY_USER_MONTHLY_CAP_USD, for users without caps of their own. */
  costCapDefaults: CostCapDefaults;
  /** AMY_MAX_TURNS_PER_MINUTE: turns a user may create in any 60 s. */
  maxTurnsPerMinute: number;
  /** Aborted when a draining process's grace is over (../drain.ts): a blocking request stops waiting then. */
  shutdownDeadline?: AbortSignal;
}

/**
 * A blocking request still waiting when its process's drain runs out of grace: the turn runs on, and
 * the same request with the same Idempotency-Key waits for it on another process (the SDK repeats it by
 * itself). Without a key a repeat would start another turn: the turn is named in `Location` instead.
 */
function stillRunningAtShutdown(turnId: string) {
  return new ApiError(
    'service_unavailable',
    `This API process is shutting down and turn ${turnId} is still running: send the request again with the same Idempotency-Key to wait for it, or read GET /v1/turns/${turnId}.`,
    undefined,
    { 'Retry-After': '1', Location: `/v1/turns/${turnId}` },
  );
}

/**
 * Aborted when the client goes: a blocking request stops waiting (and long-polling Temporal) for a turn
 * whose answer nobody will read. The turn itself runs on.
 */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  // A client that left while the turn was looked up has had its 'close' already.
  if (res.destroyed) controller.abort();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

const turnIdFrom = (req: Request) => {
  const id = String(req.params.id);
  if (!isTurnId(id)) throw notFound('Turn');
  // The request's span names the turn it is about (docs/operations.md#traces).
  tagTurn(id);
  return id;
};

export function turnRoutes(deps: TurnRoutesDeps): Router {
  const { pool, logger } = deps;
  const workflows = createTurnWorkflows(deps);
  // Blocking replays waiting for their turn's end, per user and Idempotency-Key (api/idempotency.ts).
  const waitingReplays = createKeyedSlots(MAX_WAITING_REPLAYS_PER_KEY);
  const router = Router();
  /** A blocking request waits until its client goes or its process's drain is out of grace. */
  const waitingFor = (gone: AbortSignal) =>
    deps.shutdownDeadline ? AbortSignal.any([gone, deps.shutdownDeadline]) : gone;

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
      costCaps: deps.costCapDefaults,
      maxPerMinute: deps.maxTurnsPerMinute,
      idempotency:
        idempotencyKey === undefined ? undefined : { key: idempotencyKey, requestHash: hashCreateTurnRequest(body) },
    });
    tagTurn(turn.id);
    if (replayed) {
      // The request that created the turn started its workflow; this one answers as that one did.
      logger.info('turn request replayed', { turn_id: turn.id, request_id: res.locals.requestId, stream: body.stream });
      if (body.stream) {
        res.set(IDEMPOTENT_REPLAYED_HEADER, 'true').status(201).json(toTurnResource(turn));
        return;
      }
      const release = isTurnInFlight(turn) ? waitingReplays.tryAcquire(`${userId} ${idempotencyKey}`) : () => {};
      if (!release) throw idempotencyKeyInUse();
      try {
        const gone = clientGone(res);
        const ended = await workflows.endOfReplayedTurn(userId, turn.id, waitingFor(gone));
        if (ended) res.set(IDEMPOTENT_REPLAYED_HEADER, 'true').status(200).json(toTurnResource(ended));
        else if (!gone.aborted) throw stillRunningAtShutdown(turn.id);
      } finally {
        release();
      }
      return;
    }
    // The Turn keeps the conversation as sent; the steps read its end (../temporal/conversation-window.ts).
    const input = {
      turnId: turn.id,
      userId,
      messages: conversationWindow(body.messages),
      context: body.context,
      ...(body.interaction ? { interaction: body.interaction } : {}),
    };
    const started = { turn_id: turn.id, request_id: res.locals.requestId, stream: body.stream, ...traceLogFields() };
    if (body.stream) {
      await workflows.startTurnWorkflowWithin(input, () => logger.info('turn started', started));
      res.status(201).json(toTurnResource(turn));
      return;
    }
    const workflow = await workflows.startTurnWorkflow(input);
    logger.info('turn started', started);
    const gone = clientGone(res);
    const waiting = waitingFor(gone);
    await workflow.waitForEnd(waiting);
    if (gone.aborted) return;
    const ended = await getTurnForUserOrThrow(pool, userId, turn.id);
    if (waiting.aborted && isTurnInFlight(ended)) throw stillRunningAtShutdown(turn.id);
    res.status(200).json(toTurnResource(ended));
  });

  router.get('/v1/turns', async (req, res) => {
    const query = parseRequest(ROUTES.listTurns.query, req.query, 'query');
    res.json(await listTurnsForUser(pool, res.locals.userId as string, query));
  });

  router.get('/v1/turns/:id', async (req, res) => {
    const row = await getTurnForUserOrThrow(pool, res.locals.userId as string, turnIdFrom(req));
    const turn: Turn = toTurnResource(row);
    if (isTurnInFlight(row)) {
      const progress = await workflows.progressOf(row);
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
      await workflows.requestCancellation(userId, row.id);
      logger.info('turn cancellation requested', { turn_id: row.id, request_id: res.locals.requestId });
      row = await getTurnForUserOrThrow(pool, userId, row.id);
    }
    res.status(isTurnInFlight(row) ? 202 : 200).json(toTurnResource(row));
  });

  /**
   * The answer to the question the turn is waiting on (docs/api.md#asking-back). Another user's turn is a 404, as
   * everywhere; a turn that has ended waits for nothing (409). The workflow's validator decides the rest.
   */
  router.post('/v1/turns/:id/input', async (req, res) => {
    const userId = res.locals.userId as string;
    const idempotencyKey = parseIdempotencyKey(req.get(IDEMPOTENCY_KEY_HEADER));
    const answer = parseRequest(ROUTES.answerTurnInput.body, req.body ?? {}, 'body');
    const row = await getTurnForUserOrThrow(pool, userId, turnIdFrom(req));
    if (!isTurnInFlight(row)) throw new ApiError('input_not_requested', 'The turn has ended; it waits for no answer.');
    const received = await answerTurnInput(deps.temporal, {
      userId,
      turnId: row.id,
      answer,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
    logger.info('turn input answered', { turn_id: row.id, request_id: res.locals.requestId });
    res.json(received);
  });

  return router;
}
