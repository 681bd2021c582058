/**
 * A turn's events as an async iterable that keeps the stream's promises on the client side:
 *
 * - **Exactly once, in order.** The last id received is tracked, every reconnection resumes after
 *   it (`Last-Event-Id`), and an id at or below it is dropped.
 * - **The terminal event always arrives.** A connection that ends without `turn.completed` or
 *   `turn.failed` is a disconnect, not an end. Once the replay window has passed, the stored Turn
 *   supplies the terminal event, marked `snapshot: true`.
 * - **Backoff per outage, not per turn.** Reconnections back off exponentially with full jitter up
 *   to a cap, after `Retry-After` when the server sent one; the count starts over whenever an event
 *   arrives, so a long turn behind a proxy that cuts every minute never gives up. `maxRetries`
 *   failures in a row throw `StreamDisconnectedError`, which carries the last id.
 * - **An idle watchdog.** No byte for `idleTimeoutMs` drops the connection and reconnects.
 * - **Detach is not cancel.** `break`, `return()` or the caller's `signal` stop watching and close
 *   the connection; the turn runs on. Only `amy.turns.cancel` cancels.
 */
import { sleep, watchAbort } from '../core/abort';
import { retryDelay, type BackoffPolicy } from '../core/backoff';
import {
  AmyError,
  APIConnectionError,
  APIError,
  APIUserAbortError,
  NotFoundError,
  StreamDisconnectedError,
  TurnEventsExpiredError,
  TurnFailedError,
} from '../core/errors';
import { isRetryableStatus } from '../core/http';
import { TERMINAL_EVENTS, TURN_EVENT_TYPES } from '../../../contracts/event-catalog';
import type { Turn, TurnResult } from '../../../contracts/turn';
import type { StreamAgent } from '../../../contracts/event-data';
import type { TurnCompletedEvent, TurnFailedEvent, TurnStreamEvent } from '../events';
import type { SseMessage } from './sse-decoder';
import type { StreamTransport } from './transport';
import { AgentTranscripts } from './transcripts';

/** The details `onReconnect` gets after the last event id. */
export interface ReconnectInfo {
  /** 1 for the first reconnection after an event, 2 for the next failure in a row, … */
  attempt: number;
  /** The reconnection resumes after this id (the callback's first argument too). */
  lastEventId: number;
  /** How long the stream waits before reconnecting. */
  delayMs: number;
  /** Why the connection was lost. */
  cause: unknown;
}

export interface TurnStreamOptions {
  /** Resume after this event id, e.g. a Turn's `last_event_id` or the last id a previous stream saw. */
  lastEventId?: number;
  /**
   * Called before each reconnection with the id it resumes after, as the contract writes it
   * (`onReconnect: (lastId) => …`), then the attempt, the delay and the cause.
   */
  onReconnect?: (lastEventId: number, info: ReconnectInfo) => void;
  /** Failed connections in a row (no event in between) before the stream gives up. Default 5. */
  maxRetries?: number;
  /** The first reconnection's backoff ceiling; it doubles with each failure in a row. Default 1,000. */
  retryDelayMs?: number;
  /** No reconnection waits longer than this. Default 30,000. */
  maxRetryDelayMs?: number;
  /** A connection silent this long is dropped and reopened. Default 300,000 (5 min). */
  idleTimeoutMs?: number;
  /** Stops watching (the iterator throws `APIUserAbortError`); the turn keeps running. */
  signal?: AbortSignal;
}

export interface TurnStreamDeps {
  transport: StreamTransport;
  url: string;
  headers: Record<string, string>;
  /** Reads the stored Turn (for the terminal event once the replay window has passed). */
  getTurn(signal: AbortSignal | undefined): Promise<Turn>;
}

export interface StreamSettings {
  maxRetries: number;
  backoff: BackoffPolicy;
  idleTimeoutMs: number;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(TURN_EVENT_TYPES);
const isTerminal = (event: TurnStreamEvent): event is TurnCompletedEvent | TurnFailedEvent =>
  (TERMINAL_EVENTS as readonly string[]).includes(event.type);

export class TurnStream implements AsyncIterable<TurnStreamEvent> {
  /** The id of the last event yielded (or the `lastEventId` the stream started after). */
  lastEventId: number;
  private terminal: TurnCompletedEvent | TurnFailedEvent | null = null;
  private started = false;
  private readonly transcripts = new AgentTranscripts();
  private settle!: () => void;
  private readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(
    readonly turnId: string,
    private readonly deps: TurnStreamDeps,
    private readonly settings: StreamSettings,
    private readonly options: TurnStreamOptions = {},
  ) {
    this.lastEventId = options.lastEventId ?? 0;
  }

  [Symbol.asyncIterator](): AsyncIterator<TurnStreamEvent> {
    if (this.started) throw new AmyError('This stream is already being read; open another with amy.turns.stream().');
    this.started = true;
    return this.events();
  }

  /**
   * The turn's result once it has completed (reading the rest of the stream if nobody else is), or
   * a `TurnFailedError` with the turn's error code if it failed.
   */
  async finalResult(): Promise<TurnResult> {
    if (!this.started) {
      const events = this[Symbol.asyncIterator]();
      while (!(await events.next()).done);
    }
    await this.settled;
    const end = this.terminal;
    if (end?.type === 'turn.completed') return end.result;
    if (end?.type === 'turn.failed') throw new TurnFailedError(this.turnId, end.error, end.cost_usd);
    throw new AmyError(`The stream of ${this.turnId} stopped before the turn ended.`);
  }

  /** An agent's narration so far: its deltas concatenated (`synthesis` is the answer as it streams, checked). */
  text(agent: StreamAgent): string {
    return this.transcripts.text(agent);
  }

  private record(event: TurnStreamEvent) {
    this.lastEventId = event.id;
    this.transcripts.record(event);
    // A retried turn's log goes on after its `turn.failed`: the stream ends at the last terminal event.
    if (isTerminal(event)) this.terminal = event;
    else if (event.type === 'turn.retried') this.terminal = null;
  }

  private async *events(): AsyncGenerator<TurnStreamEvent, void, undefined> {
    const { signal, onReconnect } = this.options;
    const maxRetries = this.options.maxRetries ?? this.settings.maxRetries;
    const backoff: BackoffPolicy = {
      baseDelayMs: this.options.retryDelayMs ?? this.settings.backoff.baseDelayMs,
      maxDelayMs: this.options.maxRetryDelayMs ?? this.settings.backoff.maxDelayMs,
    };
    const idleTimeoutMs = this.options.idleTimeoutMs ?? this.settings.idleTimeoutMs;
    let failures = 0;
    try {
      for (;;) {
        if (signal?.aborted) throw new APIUserAbortError();
        let cause: unknown;
        let retryAfterMs: number | undefined;
        const connection = new AbortController();
        let idle = false;
        let watchdog: ReturnType<typeof setTimeout> | undefined;
        const kickWatchdog = () => {
          clearTimeout(watchdog);
          watchdog = setTimeout(() => {
            idle = true;
            connection.abort();
          }, idleTimeoutMs);
        };
        const unwatch = watchAbort(signal, () => connection.abort());
        const connectionMessages = this.deps.transport({
          url: this.deps.url,
          headers: this.deps.headers,
          lastEventId: this.lastEventId,
          signal: connection.signal,
          onActivity: kickWatchdog,
        });
        const messages = connectionMessages[Symbol.asyncIterator]();
        try {
          for (;;) {
            // The watchdog times the network only, never a consumer that is slow between events.
            kickWatchdog();
            const next = await messages.next();
            clearTimeout(watchdog);
            if (next.done) break;
            const event = parseEvent(next.value);
            if (event.id <= this.lastEventId) continue;
            failures = 0;
            this.record(event);
            yield event;
          }
          if (this.terminal || (await this.endedBeforeResume())) return;
          cause = new APIConnectionError('The stream closed before the turn ended.');
        } catch (err) {
          if (signal?.aborted) throw new APIUserAbortError();
          if (isExpiry(err)) {
            const end = await this.fromSnapshot(err);
            if (end) yield end;
            return;
          }
          if (err instanceof APIError && !isRetryableStatus(err.status)) throw err;
          cause = idle ? new APIConnectionError(`No data for ${idleTimeoutMs} ms; reconnecting.`) : err;
          retryAfterMs = err instanceof APIError ? err.retryAfterMs : undefined;
        } finally {
          clearTimeout(watchdog);
          unwatch();
          connection.abort();
          await messages.return?.();
        }
        failures++;
        // After the terminal event only one look is needed: does an operator's retry of the turn follow?
        if (this.terminal) {
          if (failures > 1) return;
        } else if (failures > maxRetries) {
          throw new StreamDisconnectedError({
            turnId: this.turnId,
            lastEventId: this.lastEventId,
            attempts: failures,
            cause,
          });
        }
        const delayMs = retryDelay(failures, backoff, retryAfterMs);
        onReconnect?.(this.lastEventId, { attempt: failures, lastEventId: this.lastEventId, delayMs, cause });
        await sleep(delayMs, signal, () => new APIUserAbortError());
      }
    } finally {
      this.settle();
    }
  }

  /**
   * A stream resumed at or after the turn's terminal event (from a Turn's `last_event_id`, or an id
   * saved earlier) is closed at once with nothing in it. The stored Turn tells that apart from a
   * disconnect: it has ended and its log holds nothing after our position. Its outcome is kept for
   * `finalResult()` without yielding an event the caller has already seen.
   */
  private async endedBeforeResume(): Promise<boolean> {
    const turn = await this.deps.getTurn(this.options.signal).catch(() => null);
    if (!turn || (turn.status !== 'completed' && turn.status !== 'failed')) return false;
    if (turn.last_event_id > this.lastEventId) return false;
    this.terminal = terminalFromTurn(turn, turn.last_event_id);
    return true;
  }

  /**
   * The terminal event rebuilt from the stored Turn once its events have expired. An EventSource
   * reports a bare 404 without the error code: the Turn tells an expired log from a missing turn.
   */
  private async fromSnapshot(cause: APIError): Promise<TurnCompletedEvent | TurnFailedEvent | null> {
    const turn = await this.deps.getTurn(this.options.signal);
    if (turn.status !== 'completed' && turn.status !== 'failed') throw cause;
    if (this.terminal) return null;
    const end = terminalFromTurn(turn, Math.max(turn.last_event_id, this.lastEventId + 1));
    this.record(end);
    return end;
  }
}

/** The terminal event an ended Turn stands for. */
function terminalFromTurn(turn: Turn, id: number): TurnCompletedEvent | TurnFailedEvent {
  if (turn.status === 'completed' && turn.result) {
    return { id, type: 'turn.completed', turn_id: turn.id, result: turn.result, snapshot: true };
  }
  const error = turn.error ?? { code: 'internal_error', message: 'The turn failed.', request_id: '', docs_url: '' };
  return { id, type: 'turn.failed', turn_id: turn.id, error, cost_usd: turn.cost_usd ?? 0, snapshot: true };
}

const isExpiry = (err: unknown): err is APIError =>
  err instanceof TurnEventsExpiredError || (err instanceof NotFoundError && err.code === 'http_404');

/** One SSE message as a typed event. A malformed one is a broken connection: reconnecting re-reads it whole. */
function parseEvent(message: SseMessage): TurnStreamEvent {
  const id = Number(message.id);
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    data = undefined;
  }
  if (!Number.isSafeInteger(id) || id < 1 || data === undefined) {
    throw new APIConnectionError(`Received a malformed event (id ${JSON.stringify(message.id)}).`);
  }
  if (!KNOWN_TYPES.has(message.event) || typeof data !== 'object' || data === null) {
    return { id, type: 'unknown', event: message.event, data };
  }
  return { ...(data as object), id, type: message.event } as TurnStreamEvent;
}
