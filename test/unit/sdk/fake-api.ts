/**
 * A scripted stand-in for the API at the `fetch` boundary, for unit tests of the SDK's stream and
 * request logic: each connection to the event stream follows a plan (how many events, then close,
 * break or go silent; or an error status), and the log resumes after `Last-Event-Id` as the real
 * server's does. End-to-end suites use the real service instead.
 */
import type { FetchLike } from '@amy/sdk';

export interface LogEvent {
  id: number;
  type: string;
  data: Record<string, unknown>;
}

export interface RecordedRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: string | undefined;
  signal: AbortSignal | undefined;
}

export const TURN_ID = 'turn_01HX2K3M4N5P6Q7R8S9T0V1W2X';

/** A synthesis turn: started, the agent's deltas, completed. */
export function turnLog(deltas: string[], result: Record<string, unknown> = {}): LogEvent[] {
  const answer = deltas.join('');
  const events: Array<Omit<LogEvent, 'id'>> = [
    { type: 'turn.started', data: { turn_id: TURN_ID, at: '2026-11-23T10:00:00.000Z' } },
    { type: 'agent.started', data: { agent: 'synthesis', at: '2026-11-23T10:00:01.000Z', question: 'q' } },
    ...deltas.map((delta) => ({
      type: 'agent.thought',
      data: { agent: 'synthesis', delta, attempt: 1, step: 'synthesis' },
    })),
    {
      type: 'turn.completed',
      data: {
        turn_id: TURN_ID,
        result: {
          answer,
          fact_sheet: [],
          agents_used: [],
          validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
          cost_usd: 0.001,
          duration_ms: 1200,
          ...result,
        },
      },
    },
  ];
  return events.map((e, i) => ({ id: i + 1, ...e }));
}

export const formatEvent = (e: LogEvent) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;

const abortError = () => Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });

/**
 * A response whose body is `text`, then: `close` ends it cleanly, `error` breaks it (a reset
 * connection), `hang` keeps it open and silent until the request is aborted.
 */
export function streamingResponse(
  text: string,
  then: 'close' | 'error' | 'hang',
  signal: AbortSignal | undefined,
  init: ResponseInit = { status: 200, headers: { 'content-type': 'text/event-stream' } },
): Response {
  // Data first, then the ending: erroring a stream discards what it still holds, so the ending
  // waits for the pull after the data was read.
  let delivered = text === '';
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!delivered) {
        delivered = true;
        controller.enqueue(new TextEncoder().encode(text));
      } else if (then === 'close') controller.close();
      else if (then === 'error') controller.error(Object.assign(new TypeError('terminated'), { cause: 'ECONNRESET' }));
      else {
        return new Promise<void>((_resolve, reject) => {
          const fail = () => reject(abortError());
          if (signal?.aborted) fail();
          else signal?.addEventListener('abort', fail, { once: true });
        });
      }
    },
  });
  return new Response(body, init);
}

export interface ConnectionPlan {
  /** How many of the remaining events this connection delivers (all by default). */
  events?: number;
  /** Bytes of the next event sent after them, cutting it mid-frame. */
  partialBytes?: number;
  then?: 'close' | 'error' | 'hang';
  /** Answer with this status and error envelope instead of a stream. */
  status?: number;
  code?: string;
  headers?: Record<string, string>;
  /** Ignore Last-Event-Id and replay from this id (a server or proxy that repeats events). */
  replayFrom?: number;
}

export interface FakeApi {
  fetch: FetchLike;
  requests: RecordedRequest[];
  streamRequests(): RecordedRequest[];
}

/**
 * Serves `log` on the events route, one plan per connection (the last plan repeats), and answers
 * other routes with `routes[METHOD path]`.
 */
export function fakeApi(
  log: LogEvent[],
  plans: ConnectionPlan[],
  routes: Record<string, (req: RecordedRequest) => Response> = {},
): FakeApi {
  const requests: RecordedRequest[] = [];
  let connection = 0;
  const fetch: FetchLike = async (input, init = {}) => {
    const req: RecordedRequest = {
      url: new URL(input),
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body: init.body as string | undefined,
      signal: init.signal ?? undefined,
    };
    requests.push(req);
    if (req.signal?.aborted) throw abortError();
    if (req.url.pathname.endsWith('/events')) {
      const plan = plans[Math.min(connection++, plans.length - 1)];
      if (plan.status) {
        const error = { code: plan.code ?? 'internal_error', message: 'scripted', request_id: 'req_x', docs_url: '' };
        return new Response(JSON.stringify({ error }), {
          status: plan.status,
          headers: { 'content-type': 'application/json', ...plan.headers },
        });
      }
      const after = plan.replayFrom !== undefined ? plan.replayFrom - 1 : Number(req.headers.get('last-event-id') ?? 0);
      const remaining = log.filter((e) => e.id > after);
      const sent = remaining.slice(0, plan.events ?? remaining.length);
      let text = sent.map(formatEvent).join('');
      const next = remaining[sent.length];
      if (plan.partialBytes && next) text += formatEvent(next).slice(0, plan.partialBytes);
      return streamingResponse(text, plan.then ?? 'close', req.signal);
    }
    const route = routes[`${req.method} ${req.url.pathname}`];
    if (!route) throw new Error(`fake API: no route for ${req.method} ${req.url.pathname}`);
    return route(req);
  };
  return { fetch, requests, streamRequests: () => requests.filter((r) => r.url.pathname.endsWith('/events')) };
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
