/**
 * Server-Sent Events framing (docs/streaming.md#the-wire-format): `id`, `event`, one-line JSON `data`, a blank line. No
 * comments, and a `retry:` directive only as the last thing a draining process sends (reconnectHint).
 */
import type { ServerResponse } from 'node:http';
import type { TurnEvent } from '../../contracts/event-data';

export function formatSseEvent(event: TurnEvent): string {
  // JSON.stringify never emits raw newlines, so `data` is always exactly one line.
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** The reconnection delay a draining process suggests, spread so that its clients do not all come back at once. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_SPREAD_MS = 1_750;

/**
 * A `retry:` directive alone (no `data`, so no event is dispatched): it sets an EventSource's
 * reconnection delay, and is the last thing a stream ended by a drain carries (docs/streaming.md#the-wire-format).
 */
export function reconnectHint(): string {
  return `retry: ${RECONNECT_MIN_MS + Math.floor(Math.random() * RECONNECT_SPREAD_MS)}\n\n`;
}

export function openSseStream(res: ServerResponse, requestId: string) {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'X-Request-Id': requestId,
  });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
}

/** `Last-Event-Id` must be a non-negative integer; anything else is a client bug worth a 400. */
export function parseLastEventId(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === '') return 0;
  return /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : null;
}
