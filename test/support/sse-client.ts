/**
 * A real EventSource client (the `eventsource` package, WHATWG semantics) for SSE tests. Node's
 * EventSource cannot set headers either, so the key goes in a custom fetch, as a proxy would add it.
 */
import { EventSource } from 'eventsource';
import { TERMINAL_EVENTS } from '../../contracts/event-data';
import { STREAM_EVENT_TYPES } from './event-types';

export interface ReceivedEvent {
  id: number;
  type: string;
  data: Record<string, unknown>;
  rawData: string;
}

/** One stream the server opened (a 200 response), first connection or reconnection. */
interface SseConnection {
  /** The `Last-Event-ID` header the request carried; null when it carried none. */
  lastEventId: string | null;
  /** Index in `events` of the first event received on this connection. */
  firstEvent: number;
}

export interface SseSession {
  events: ReceivedEvent[];
  /** Every stream opened, in order; attempts that found no server (connection refused) are not listed. */
  connections: SseConnection[];
  /** How many times the stream broke (EventSource `error` events), the server's final close included. */
  drops(): number;
  /** Resolves when a received event satisfies the predicate. */
  waitFor(predicate: (e: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  /** Resolves when the server closed the stream (EventSource sees an error after the last event). */
  closedByServer: Promise<void>;
  responseHeaders: Promise<Headers>;
  close(): void;
}

/**
 * By default the first error closes the EventSource (the server ends every stream after the terminal
 * event, and a reconnect would only wait for more). With `reconnect: true` a broken stream is left to
 * the EventSource's own reconnection, which resends the last id it saw as `Last-Event-ID`; it is closed
 * once a terminal event has arrived or the EventSource gives up by itself.
 */
export function openEventStream(
  url: string,
  opts: { apiKey?: string; lastEventId?: number; reconnect?: boolean } = {},
): SseSession {
  const events: ReceivedEvent[] = [];
  const opened: SseConnection[] = [];
  let drops = 0;
  let terminalSeen = false;
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
      const sent = Object.entries(headers).find(([name]) => name.toLowerCase() === 'last-event-id');
      const res = await fetch(input, { ...init, headers });
      resolveHeaders(res.headers);
      if (res.status === 200) opened.push({ lastEventId: sent ? sent[1] : null, firstEvent: events.length });
      return res;
    },
  });
  const onEvent = (type: string) => (msg: MessageEvent) => {
    const event: ReceivedEvent = { id: Number(msg.lastEventId), type, data: JSON.parse(msg.data), rawData: msg.data };
    events.push(event);
    if ((TERMINAL_EVENTS as readonly string[]).includes(type)) terminalSeen = true;
    for (const w of [...waiters]) {
      if (w.predicate(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  };
  for (const type of STREAM_EVENT_TYPES) source.addEventListener(type, onEvent(type));
  source.onerror = () => {
    drops++;
    // Reconnecting lets the EventSource retry; a closed one (a non-200 answer) will not, and after the
    // terminal event a reconnection would only wait forever.
    if (opts.reconnect && !terminalSeen && source.readyState !== source.CLOSED) return;
    // The server ends the stream after the terminal event; don't let EventSource reconnect.
    source.close();
    resolveClosed();
  };

  return {
    events,
    connections: opened,
    drops: () => drops,
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
