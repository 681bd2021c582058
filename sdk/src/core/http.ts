/**
 * One HTTP exchange with the API, and the retries around it.
 *
 * - `timeoutMs` covers the whole exchange, the response body included: a server that sends headers
 *   and then stalls is a timeout, not a hang.
 * - Retried, and only where repeating the request is safe (reads, deletes, cancellations, upserts,
 *   and creations that carry an `Idempotency-Key`): network failures and timeouts, and 408, 429 and
 *   5xx answers, after `Retry-After` when the server sent one, otherwise with exponential backoff and
 *   full jitter. A 5xx can come after the server did the work, so a POST that would do it twice is
 *   never sent again. A 409 is never retried: it is the server's answer about the request itself
 *   (a limit reached, a key still in use), and the same request gets it again. A concurrency-limit
 *   429 is not retried either: a slot frees only when a turn ends, minutes away; nor is a cost-cap
 *   429, which lasts until the cap's UTC day or month ends.
 * - Every other error answer becomes its `APIError` subclass at once.
 */
import { sleep, watchAbort } from './abort';
import { retryDelay, type BackoffPolicy } from './backoff';
import {
  AmyError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  ConcurrencyLimitError,
  CostCapExceededError,
  describe,
} from './errors';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface RequestOptions {
  /** Stops waiting (and retrying). A turn that was started keeps running: cancel it with `amy.turns.cancel`. */
  signal?: AbortSignal;
  /** The whole exchange, body included, for each try. */
  timeoutMs?: number;
  /** Retries after the first try. */
  maxRetries?: number;
}

export interface HttpSettings {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  maxRetries: number;
  backoff: BackoffPolicy;
  timeoutMs: number;
}

export interface ApiRequest extends RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Makes a POST safe to repeat after a network failure; the same key is sent on every try. */
  idempotencyKey?: string;
  /** A POST whose repetition changes nothing (a cancellation): repeated after a network failure too. */
  repeatable?: boolean;
  /** A DELETE retried after a failure that may have reached the server: a 404 then means it did. */
  deleteIsIdempotent?: boolean;
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

export const isRetryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/** A 429 that no backoff outlasts: a turn slot frees only when a turn ends, a cost cap when its window does. */
const isLongWait = (error: APIError): boolean =>
  error instanceof ConcurrencyLimitError || error instanceof CostCapExceededError;

export class HttpClient {
  constructor(readonly settings: HttpSettings) {}

  url(path: string, query?: ApiRequest['query']): string {
    const url = new URL(this.settings.baseUrl.replace(/\/+$/, '') + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  authHeaders(): Record<string, string> {
    return { Authorization: `Bearer ${this.settings.apiKey}` };
  }

  async request<T>(req: ApiRequest): Promise<ApiResponse<T>> {
    const maxRetries = req.maxRetries ?? this.settings.maxRetries;
    const timeoutMs = req.timeoutMs ?? this.settings.timeoutMs;
    const safeToRepeat = req.method !== 'POST' || req.repeatable === true || req.idempotencyKey !== undefined;
    const headers: Record<string, string> = { ...this.authHeaders(), Accept: 'application/json' };
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    if (req.idempotencyKey !== undefined) headers['Idempotency-Key'] = req.idempotencyKey;
    const init: RequestInit = {
      method: req.method,
      headers,
      ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
    };
    const url = this.url(req.path, req.query);
    let mayHaveReachedServer = false;
    for (let attempt = 0; ; attempt++) {
      let retryAfterMs: number | undefined;
      try {
        const res = await this.exchange(url, init, timeoutMs, req.signal);
        if (res.status < 400) return { status: res.status, headers: res.headers, body: parseBody(res) as T };
        if (res.status === 404 && req.deleteIsIdempotent && mayHaveReachedServer) {
          return { status: 204, headers: res.headers, body: undefined as T };
        }
        const error = APIError.from(res.status, envelopeOf(res), res.headers);
        if (!safeToRepeat || attempt >= maxRetries || !isRetryableStatus(res.status) || isLongWait(error)) throw error;
        retryAfterMs = error.retryAfterMs;
      } catch (err) {
        if (!(err instanceof APIConnectionError) || !safeToRepeat || attempt >= maxRetries) throw err;
        mayHaveReachedServer = true;
      }
      await sleep(
        retryDelay(attempt + 1, this.settings.backoff, retryAfterMs),
        req.signal,
        () => new APIUserAbortError(),
      );
    }
  }

  /** One try: the response with its whole body read, within `timeoutMs`. */
  private async exchange(url: string, init: RequestInit, timeoutMs: number, signal: AbortSignal | undefined) {
    if (signal?.aborted) throw new APIUserAbortError();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const unwatch = watchAbort(signal, () => controller.abort());
    try {
      const res = await this.settings.fetch(url, { ...init, signal: controller.signal });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text };
    } catch (err) {
      if (signal?.aborted) throw new APIUserAbortError();
      if (timedOut) throw new APIConnectionTimeoutError(timeoutMs);
      throw new APIConnectionError(`Could not reach ${url}: ${describe(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
      unwatch();
    }
  }
}

function parseBody(res: { status: number; text: string; headers: Headers }): unknown {
  if (res.text === '') return undefined;
  try {
    return JSON.parse(res.text);
  } catch {
    throw new AmyError(
      `The API answered ${res.status} with a body that is not JSON (request ${res.headers.get('x-request-id') ?? 'unknown'}).`,
    );
  }
}

/** The error envelope's body, if the answer is one. */
export function envelopeOf(res: { text: string }): Record<string, string> | undefined {
  try {
    const parsed = JSON.parse(res.text) as { error?: unknown };
    return parsed.error && typeof parsed.error === 'object' ? (parsed.error as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}
