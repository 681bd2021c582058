/**
 * `GET /v1/turns/:id/events`, served by plain node:http ahead of Express. An SSE connection stays open
 * for the whole turn, and thousands may be open at once: Express's per-request objects would stay
 * reachable for each of them (~5 KB a stream), so this hot, long-lived route does without.
 * Same contract as every route: auth, ownership (404), the error envelope, X-Request-Id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'pg';
import { TERMINAL_EVENTS } from '../../contracts/event-data';
import { isTurnId } from '../../contracts/ids';
import { newId } from '../../platform/ids';
import { authenticate } from '../auth';
import { ApiError, errorResponse, notFound } from '../errors';
import type { EventHub } from './event-hub';
import type { Logger } from '../../platform/logger';
import { metrics } from '../../platform/metrics';
import { createKeyedSlots } from '../keyed-slots';
import { getTurnForUserOrThrow, hasTurnLogEnded, toTurnResource } from '../tables/turns';
import { formatSseEvent, openSseStream, parseLastEventId, reconnectHint } from './sse-format';

const EVENTS_PATH = /^\/v1\/turns\/([^/]+)\/events\/?$/;

export interface EventStreamDeps {
  pool: Pool;
  hub: EventHub;
  logger: Logger;
  replayWindowSeconds: number;
  /** Open streams per API key in this process (AMY_MAX_STREAMS_PER_KEY); one more is a 429. */
  maxStreamsPerKey: number;
  /** Unsent bytes a connection may hold before it is dropped (AMY_STREAM_MAX_BUFFERED_BYTES). */
  maxBufferedBytes: number;
  /** True once the process drains (./drain.ts): a stream is then ended for the client to resume elsewhere. */
  draining?: () => boolean;
}

export interface EventStreamRoute {
  /** Takes the request if it is for the event stream route, or returns false. */
  (req: IncomingMessage, res: ServerResponse): boolean;
  /** Ends every open stream so that its client resumes on another process; returns how many there were. */
  endAll(): number;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * A draining process ends a stream as a finished one would end, after a `retry:` hint: the SDK and a
 * native EventSource both take an end before the terminal event for a lost connection, and reconnect
 * with `Last-Event-Id`, reaching another process. (Refusing with a 503 instead would make an EventSource
 * give up for good: it only retries network errors and clean ends.)
 */
function endForResumption(res: ServerResponse, requestId: string) {
  if (!res.headersSent) openSseStream(res, requestId);
  res.end(reconnectHint());
}

/** Returns the event stream route (see EventStreamRoute). */
export function createEventStreamRoute(deps: EventStreamDeps): EventStreamRoute {
  const { pool, hub, logger } = deps;
  const draining = deps.draining ?? (() => false);
  // Open streams per API key.
  const quota = createKeyedSlots(deps.maxStreamsPerKey);
  // How to end each open stream, for a drain.
  const open = new Set<() => void>();

  async function serve(req: IncomingMessage, res: ServerResponse, url: URL, rawTurnId: string) {
    const query = url.searchParams;
    const requestId = newId('request');
    res.setHeader('X-Request-Id', requestId);
    if (draining()) {
      endForResumption(res, requestId);
      metrics.sseRequestAnswered('draining');
      return;
    }
    try {
      const { userId, apiKeyId } = await authenticate(pool, {
        authorization: req.headers.authorization,
        apiKeyParam: query.get('api_key') ?? undefined,
      });
      if (!isTurnId(rawTurnId)) throw notFound('Turn');
      const turn = await getTurnForUserOrThrow(pool, userId, rawTurnId);
      if (!(req.headers.accept ?? '').includes('text/event-stream')) {
        sendJson(res, 200, toTurnResource(turn));
        metrics.sseRequestAnswered('json');
        return;
      }
      if (turn.completed_at && Date.now() - turn.completed_at.getTime() > deps.replayWindowSeconds * 1000) {
        throw new ApiError(
          'turn_events_expired',
          `Events are kept for ${deps.replayWindowSeconds} s after the turn ends; read GET /v1/turns/${turn.id} instead.`,
        );
      }
      const header = req.headers['last-event-id'];
      const lastEventId = parseLastEventId(
        (Array.isArray(header) ? header[0] : header) ?? query.get('last_event_id') ?? undefined,
      );
      if (lastEventId === null) {
        throw new ApiError('invalid_field', 'Last-Event-Id must be a non-negative integer.', 'Last-Event-Id');
      }
      if (lastEventId >= turn.last_event_id && (await hasTurnLogEnded(pool, turn))) {
        // Nothing is left to send. Every native EventSource reconnects like this after the server
        // closes, so it gets the close again at once rather than a subscription that never ends.
        openSseStream(res, requestId);
        res.end();
        metrics.sseRequestAnswered('already_ended');
        return;
      }
      // The client left while the turn was looked up: its 'close' has come and gone, so a slot taken
      // or a subscription made now would never be released.
      if (res.destroyed) {
        metrics.sseRequestAnswered('client_left');
        return;
      }
      // The drain began while the turn was looked up: endAll() has run, and would miss this stream.
      if (draining()) {
        endForResumption(res, requestId);
        metrics.sseRequestAnswered('draining');
        return;
      }
      // Taken after the last await, so two requests racing for the last slot cannot both pass.
      const release = quota.tryAcquire(apiKeyId);
      if (!release) {
        throw new ApiError(
          'too_many_streams',
          `This API key already has ${deps.maxStreamsPerKey} event streams open; close one (or wait for its turn to end) before opening another.`,
          undefined,
          { 'Retry-After': '5' },
        );
      }
      res.on('close', release);
      stream(res, { turnId: turn.id, afterId: lastEventId, loggedUpTo: turn.last_event_id, requestId });
      metrics.sseRequestAnswered('opened');
    } catch (err) {
      // The path only: the query string may hold the key, and nothing in it is worth a log line.
      const where = { method: 'GET', path: url.pathname };
      const { status, code, headers, body } = errorResponse(err, requestId, logger, where);
      sendJson(res, status, body, headers);
      metrics.sseRequestAnswered(code);
    }
  }

  /**
   * `afterId` is what the client has seen; `loggedUpTo` is the log's last id when the turn was read. A
   * client may claim an id the log has not reached (a stale or foreign Last-Event-Id): the subscription
   * then starts at the log's end, so the terminal event still reaches this stream and ends it, and only
   * events above the client's id are written.
   */
  function stream(res: ServerResponse, at: { turnId: string; afterId: number; loggedUpTo: number; requestId: string }) {
    openSseStream(res, at.requestId);
    res.on('close', metrics.sseStreamOpened());
    let finished = false;
    const stop = () => {
      finished = true;
      open.delete(endForDrain);
      unsubscribe();
    };
    const endForDrain = () => {
      if (finished) return;
      stop();
      endForResumption(res, at.requestId);
    };
    open.add(endForDrain);
    const unsubscribe = hub.subscribe(at.turnId, Math.min(at.afterId, at.loggedUpTo), (events) => {
      if (finished) return;
      for (const [i, event] of events.entries()) {
        if (event.id > at.afterId) {
          res.write(formatSseEvent(event));
          // A reader that does not read leaves every write in this process's memory. Past the bound
          // the connection goes, unsent bytes and all; the client resumes with the last id it received.
          // Node holds a response's writes back until the next tick (it corks the socket), so before
          // judging, what is buffered is offered to the kernel: only what it cannot take counts, and
          // whatever it took still reaches the client before the close.
          if (res.writableLength > deps.maxBufferedBytes) res.socket?.uncork();
          if (res.writableLength > deps.maxBufferedBytes) {
            stop();
            logger.warn('event stream dropped: the client is not reading', {
              request_id: at.requestId,
              turn_id: at.turnId,
              buffered_bytes: res.writableLength,
              max_buffered_bytes: deps.maxBufferedBytes,
              last_written_id: event.id,
            });
            res.destroy();
            return;
          }
        }
        // The stream ends with the turn. A retried turn's log goes on after a `turn.failed` with
        // `turn.retried`, so a replay that already holds the next event keeps going.
        if (TERMINAL_EVENTS.includes(event.type) && events[i + 1]?.type !== 'turn.retried') {
          stop();
          res.end();
          return;
        }
      }
    });
    res.on('close', stop);
  }

  function eventStreamRoute(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' || !req.url) return false;
    const url = new URL(req.url, 'http://localhost');
    const match = EVENTS_PATH.exec(url.pathname);
    if (!match) return false;
    void serve(req, res, url, match[1]);
    return true;
  }

  function endAll(): number {
    const enders = [...open];
    for (const end of enders) end();
    return enders.length;
  }

  return Object.assign(eventStreamRoute, { endAll });
}
