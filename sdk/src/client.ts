import { readEnv } from './core/env';
import { AmyError } from './core/errors';
import { HttpClient, type FetchLike } from './core/http';
import { AccountResource } from './resources/account';
import { DataResource } from './resources/data';
import { MemoryResource } from './resources/memory';
import { Turns } from './resources/turns';
import { eventSourceTransport, fetchTransport, type EventSourceConstructor } from './streaming/transport';

export interface AmyOptions {
  /** Your API key; defaults to the `AMY_API_KEY` environment variable where there is an environment. */
  apiKey?: string;
  /** The API's address; defaults to `AMY_BASE_URL`, then `http://127.0.0.1:3000` (what `npm start` serves). */
  baseUrl?: string;
  /** A `fetch` to use instead of the global one (a proxy agent, a test double). */
  fetch?: FetchLike;
  /** Streams events over this EventSource class instead of `fetch` (e.g. `react-native-event-source`). */
  EventSourceCtor?: EventSourceConstructor;
  /** Retries of a request, and failed stream connections in a row, before giving up. Default 5. */
  maxRetries?: number;
  /** The first retry's backoff ceiling in ms; it doubles with each failure in a row (full jitter). Default 1,000. */
  retryDelayMs?: number;
  /** No retry waits longer than this. Default 30,000. */
  maxRetryDelayMs?: number;
  /** Each request, its body included. Default 60,000; a blocking `create` (`stream: false`) waits up to 15 min. */
  timeoutMs?: number;
  /** A stream connection silent this long is reopened. Default 300,000 (5 min): longer than any quiet step. */
  idleTimeoutMs?: number;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** The Amy API: `amy.turns`, `amy.memory`, `amy.data` (the user's health data) and `amy.account`. */
export class Amy {
  readonly turns: Turns;
  readonly memory: MemoryResource;
  readonly data: DataResource;
  readonly account: AccountResource;
  readonly baseUrl: string;

  constructor(options: AmyOptions = {}) {
    const apiKey = options.apiKey ?? readEnv('AMY_API_KEY');
    if (!apiKey) {
      throw new AmyError('No API key: pass { apiKey } to new Amy() or set AMY_API_KEY.');
    }
    this.baseUrl = options.baseUrl ?? readEnv('AMY_BASE_URL') ?? DEFAULT_BASE_URL;
    const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const backoff = { baseDelayMs: options.retryDelayMs ?? 1_000, maxDelayMs: options.maxRetryDelayMs ?? 30_000 };
    const maxRetries = options.maxRetries ?? 5;
    const http = new HttpClient({
      baseUrl: this.baseUrl,
      apiKey,
      fetch: fetchImpl,
      maxRetries,
      backoff,
      timeoutMs: options.timeoutMs ?? 60_000,
    });
    const transport = options.EventSourceCtor
      ? eventSourceTransport(options.EventSourceCtor)
      : fetchTransport(fetchImpl);
    this.turns = new Turns(http, transport, { maxRetries, backoff, idleTimeoutMs: options.idleTimeoutMs ?? 300_000 });
    this.memory = new MemoryResource(http);
    this.data = new DataResource(http);
    this.account = new AccountResource(http);
  }
}
