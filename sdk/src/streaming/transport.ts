/**
 * How one connection to a turn's event stream is opened and read. The stream (./turn-stream.ts)
 * owns everything across connections (ids, reconnects, backoff, the idle watchdog); a transport
 * only turns one connection into SSE messages. It throws an `APIError` for a non-200 answer, ends
 * when the server closes the stream, and throws anything else for a broken connection.
 */
import { TURN_EVENT_TYPES } from '../../../contracts/event-catalog';
import { watchAbort } from '../core/abort';
import { APIConnectionError, APIError } from '../core/errors';
import { envelopeOf, type FetchLike } from '../core/http';
import { LineDecoder } from './line-decoder';
import { SseDecoder, type SseMessage } from './sse-decoder';

interface ConnectRequest {
  url: string;
  /** Authorization; the transport adds Accept and the resume position. */
  headers: Record<string, string>;
  /** Resume after this event id (0: from the start). */
  lastEventId: number;
  /** Aborted to drop the connection (detach, idle watchdog, the caller's signal). */
  signal: AbortSignal;
  /** Called whenever bytes arrive, which keeps the idle watchdog quiet. */
  onActivity(): void;
}

export type StreamTransport = (req: ConnectRequest) => AsyncIterable<SseMessage>;

/** The default: `fetch` and a WHATWG byte stream, with `Last-Event-Id` as a header. */
export function fetchTransport(fetchImpl: FetchLike): StreamTransport {
  return async function* connect({ url, headers, lastEventId, signal, onActivity }) {
    const res = await fetchImpl(url, {
      headers: {
        ...headers,
        Accept: 'text/event-stream',
        ...(lastEventId > 0 ? { 'Last-Event-Id': String(lastEventId) } : {}),
      },
      signal,
    });
    onActivity();
    if (res.status !== 200) {
      const text = await res.text().catch(() => '');
      throw APIError.from(res.status, envelopeOf({ text }), res.headers);
    }
    if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await res.body?.cancel().catch(() => undefined);
      throw new APIConnectionError(`Expected text/event-stream from ${url}, got ${res.headers.get('content-type')}.`);
    }
    const reader = res.body.getReader();
    const lines = new LineDecoder();
    const sse = new SseDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        onActivity();
        for (const line of lines.push(value)) {
          const message = sse.line(line);
          if (message) yield message;
        }
      }
      lines.end();
    } finally {
      // Also reached when the consumer stops early: cancelling the body closes the connection.
      reader.cancel().catch(() => undefined);
    }
  };
}

/** What the SDK needs of an EventSource: the WHATWG interface, as react-native-event-source and others provide it. */
export interface EventSourceLike {
  addEventListener(type: string, listener: (event: EventSourceEvent) => void): void;
  close(): void;
}

export interface EventSourceEvent {
  data?: string;
  lastEventId?: string;
  /** HTTP status of a failed connection, where the implementation reports it (`status`, `code` or `xhrStatus`). */
  status?: number;
  code?: number;
  xhrStatus?: number;
  message?: string;
}

/** A constructor taking the URL and, where supported (React Native), request headers. */
export type EventSourceConstructor = new (
  url: string,
  init?: { headers?: Record<string, string>; withCredentials?: boolean },
) => EventSourceLike;

/**
 * The same stream over an EventSource (`EventSourceCtor`). Its own reconnection is switched off (it
 * is closed at its first error) so that ours, with backoff and exactly-once ids, is the only one.
 * The resume position goes in the URL (`last_event_id`) and, for implementations that send
 * headers, as `Last-Event-ID`. An EventSource hears only the event names it listens for: an event
 * type newer than this SDK cannot reach it.
 */
export function eventSourceTransport(EventSourceCtor: EventSourceConstructor): StreamTransport {
  return function connect({ url, headers, lastEventId, signal, onActivity }) {
    const target = new URL(url);
    if (lastEventId > 0) target.searchParams.set('last_event_id', String(lastEventId));
    const queue = new MessageQueue();
    const source = new EventSourceCtor(target.toString(), {
      headers: { ...headers, ...(lastEventId > 0 ? { 'Last-Event-ID': String(lastEventId) } : {}) },
    });
    const close = () => source.close();
    const unwatch = watchAbort(signal, () => {
      close();
      queue.fail(new APIConnectionError('The connection was dropped.'));
    });
    const deliver = (event: string) => (e: EventSourceEvent) => {
      onActivity();
      queue.push({ id: e.lastEventId ?? '', event, data: e.data ?? '' });
    };
    for (const type of [...TURN_EVENT_TYPES, 'message']) source.addEventListener(type, deliver(type));
    source.addEventListener('open', () => onActivity());
    source.addEventListener('error', (e) => {
      close();
      const status = e.status ?? e.code ?? e.xhrStatus;
      // Without a status the server ended the stream or the network broke; an EventSource cannot
      // tell which, and either way the stream decides by whether the turn's end has arrived.
      if (status && status !== 200) queue.fail(APIError.from(status, { message: e.message }, new Headers()));
      else queue.end();
    });
    return queue.iterate(() => {
      unwatch();
      close();
    });
  };
}

/** Push-based messages as an async iterable; `done` runs once when reading stops for any reason. */
class MessageQueue {
  private readonly buffered: SseMessage[] = [];
  private ended = false;
  private error: unknown = null;
  private wake: (() => void) | null = null;

  push(message: SseMessage) {
    this.buffered.push(message);
    this.notify();
  }
  end() {
    this.ended = true;
    this.notify();
  }
  fail(error: unknown) {
    this.error ??= error;
    this.notify();
  }
  private notify() {
    this.wake?.();
    this.wake = null;
  }

  async *iterate(done: () => void): AsyncGenerator<SseMessage> {
    try {
      for (;;) {
        const next = this.buffered.shift();
        if (next) yield next;
        else if (this.error) throw this.error;
        else if (this.ended) return;
        else await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      done();
    }
  }
}
