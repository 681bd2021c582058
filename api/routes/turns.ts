import { Router, type Request, type Response } from 'express';
import type { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import { TERMINAL_EVENTS } from '../../contracts/events';
import { isTurnId } from '../../contracts/ids';
import { createTurnRequestSchema } from '../../contracts/turn';
import { TURN_WORKFLOW_TYPE, type TurnWorkflowInput } from '../../workflows/definitions';
import { ROUTES } from '../contract';
import { ApiError, notFound } from '../errors';
import type { EventHub } from '../event-hub';
import type { Logger } from '../logger';
import { createQueuedTurn, discardQueuedTurn, getTurnForUserOrThrow, toTurnResource } from '../services/turns';
import { formatSseEvent, openSseStream, parseLastEventId } from '../sse';
import { parseRequest } from '../validation';

export interface TurnRoutesDeps {
  pool: Pool;
  temporal: TemporalClient;
  taskQueue: string;
  hub: EventHub;
  logger: Logger;
  maxInFlightTurns: number;
  replayWindowSeconds: number;
}

const turnIdFrom = (req: Request) => {
  const id = String(req.params.id);
  if (!isTurnId(id)) throw notFound('Turn');
  return id;
};

export function turnRoutes(deps: TurnRoutesDeps): Router {
  const { pool, temporal, hub, logger } = deps;
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

  router.get('/v1/turns/:id/events', async (req, res) => {
    const turn = await getTurnForUserOrThrow(pool, res.locals.userId as string, turnIdFrom(req));
    if (!req.accepts('text/event-stream') || !(req.get('accept') ?? '').includes('text/event-stream')) {
      res.json(toTurnResource(turn));
      return;
    }
    if (turn.completed_at && Date.now() - turn.completed_at.getTime() > deps.replayWindowSeconds * 1000) {
      throw new ApiError(
        'turn_events_expired',
        `Events are kept for ${deps.replayWindowSeconds} s after the turn ends; read GET /v1/turns/${turn.id} instead.`,
      );
    }
    const lastEventId = parseLastEventId(req.get('last-event-id') ?? (req.query.last_event_id as string | undefined));
    if (lastEventId === null) {
      throw new ApiError('invalid_field', 'Last-Event-Id must be a non-negative integer.', 'Last-Event-Id');
    }
    streamTurnEvents(res, turn.id, lastEventId);
  });

  function streamTurnEvents(res: Response, turnId: string, afterId: number) {
    const requestId = res.locals.requestId as string;
    openSseStream(res, requestId);
    let finished = false;
    const unsubscribe = hub.subscribe(turnId, afterId, (events) => {
      if (finished) return;
      for (const event of events) {
        res.write(formatSseEvent(event));
        if (TERMINAL_EVENTS.includes(event.type)) {
          finished = true;
          unsubscribe();
          res.end();
          return;
        }
      }
    });
    res.on('close', () => {
      finished = true;
      unsubscribe();
    });
    logger.debug('sse stream opened', { turn_id: turnId, request_id: requestId, after: afterId });
  }

  return router;
}
