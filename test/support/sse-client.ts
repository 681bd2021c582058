/**
 * A real EventSource client (the `eventsource` package, WHATWG semantics) for SSE tests. Node's
 * EventSource cannot set headers either, so the key goes in a custom fetch, as a proxy would add it.
 */
import { EventSource } from 'eventsource';
import { STREAM_EVENT_TYPES } from './event-types';

export interface ReceivedEvent {
  id: number;
  type: string;
  data: Record<string, unknown>;
  rawData: string;
}

export interface SseSession {
  events: ReceivedEvent[];
  /** Resolves when a received event satisfies the predicate. */
  waitFor(predicate: (e: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  /** Resolves when the server closed the stream (EventSource sees an error after the last event). */
  closedByServer: Promise<void>;
  responseHeaders: Promise<Headers>;
  close(): void;
}

export function openEventStream(url: string, opts: { apiKey?: string; lastEventId?: number } = {}): SseSession {
  const events: ReceivedEvent[] = [];
  const waiters: Array<{ predicate: (e: ReceivedEvent) => boolean; resolve: (e: ReceivedEvent) => void }> = [];
  let resolveHeaders!: (h: Headers) => void;
  const responseHeaders = new Promise<Headers>((r) => (resolveHeaders = r));
  let resolveClosed!: () => void;
  const closedByServer = new Promise<void>((r) => (resolveClosed = r));
  let connections = 0;

  const source = new EventSource(url, {
    fetch: async (input, init) => {
      connections++;
      const headers: Record<string, string> = { ...(init?.headers as Record<string, string>) };
      if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
      if (opts.lastEventId !== undefined && connections === 1) headers['last-event-id'] = String(opts.lastEventId);
      const res = await fetch(input, { ...init, headers });
      resolveHeaders(res.headers);
      return res;
    },
  });
  const onEvent = (type: string) => (msg: MessageEvent) => {
    const event: ReceivedEvent = { id: Number(msg.lastEventId), type, data: JSON.parse(msg.data), rawData: msg.data };
    events.push(event);
    for (const w of [...waiters]) {
      if (w.predicate(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  };
  for (const type of STREAM_EVENT_TYPES) source.addEventListener(type, onEvent(type));
  source.onerror = () => {
    // The server ends the stream after the terminal event; don't let EventSource reconnect.
    source.close();
    resolveClosed();
  };

  return {
    events,
    waitFor(predicate, timeoutMs = 30_000) {
      const found = events.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`no matching event within ${timeoutMs} ms; got ${events.map((e) => e.type).join(', ')}`)),
          timeoutMs,
        );
        waiters.push({ predicate, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    closedByServer,
    responseHeaders,
    close: () => source.close(),
  };
}
