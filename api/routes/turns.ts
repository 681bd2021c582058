import { Router, type Request } from 'express';
import type { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import { isTurnId } from '../../contracts/ids';
import { createTurnRequestSchema } from '../../contracts/turn';
import { TURN_WORKFLOW_TYPE, type TurnWorkflowInput } from '../../workflows/definitions';
import { ROUTES } from '../contract';
import { ApiError, notFound } from '../errors';
import type { Logger } from '../logger';
import { createQueuedTurn, discardQueuedTurn, getTurnForUserOrThrow, toTurnResource } from '../services/turns';
import { parseRequest } from '../validation';

export interface TurnRoutesDeps {
  pool: Pool;
  temporal: TemporalClient;
  taskQueue: string;
  logger: Logger;
  maxInFlightTurns: number;
}

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
    const body = parseRequest(ROUTES.createTurn.body, req.body ?? {}, 'body') as ReturnType<
      typeof createTurnRequestSchema.parse
    >;
    if (body.messages[body.messages.length - 1].role !== 'user') {
      throw new ApiError('invalid_request', 'The last message must be from the user.', 'messages');
    }
    const userId = res.locals.userId as string;
    const turn = await createQueuedTurn(pool, {
      userId,
      messages: body.messages,
      context: body.context,
      maxInFlight: deps.maxInFlightTurns,
    });
    const input: TurnWorkflowInput = { turnId: turn.id, userId, messages: body.messages, context: body.context };
    let handle;
    try {
      handle = await temporal.workflow.start(TURN_WORKFLOW_TYPE, {
        workflowId: turn.id,
        taskQueue: deps.taskQueue,
        args: [input],
        staticSummary: `Turn: ${body.messages[body.messages.length - 1].content.slice(0, 120)}`,
      });
    } catch (err) {
      await discardQueuedTurn(pool, turn.id);
      logger.error('could not start turn workflow', { turn_id: turn.id, error: String(err) });
      throw new ApiError('service_unavailable', 'The turn could not be started; try again shortly.');
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

  router.get('/v1/turns/:id', async (req, res) => {
    const turn = await getTurnForUserOrThrow(pool, res.locals.userId as string, turnIdFrom(req));
    res.json(toTurnResource(turn));
  });

  return router;
}
