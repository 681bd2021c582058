/**
 * One GET to an outside service, as every network tool makes it: through the host's circuit and rate
 * limit, with a deadline over the whole exchange (headers and body), and every failure as a
 * NetworkToolError (./errors.ts). The URL carries the query, so nothing here puts it in an error.
 */
import { createCircuitBreaker, type CircuitBreaker } from './circuit';
import {
  type NetworkToolService,
  ToolMalformedResponseError,
  ToolRateLimitedError,
  ToolRequestRefusedError,
  ToolTimeoutError,
  ToolUnavailableError,
} from './errors';
import { RateLimitBacklogError, type RateLimiter } from './rate-limit';

export interface OutsideServiceDeps {
  fetch: typeof globalThis.fetch;
  limiter: RateLimiter;
  circuit: CircuitBreaker;
  timeoutMs: number;
}

/** What a client of an outside service is configured with, besides its own parameters. */
export interface OutsideServiceOptions {
  baseUrl: string;
  fetch?: typeof globalThis.fetch;
  limiter: RateLimiter;
  timeoutMs: number;
  /** One per process in production (./network-tools.ts); a client of its own otherwise. */
  circuit?: CircuitBreaker;
}

/** A client's base URL (no trailing slash), its host as errors name it, and the deps of its guarded GETs. */
export function outsideService(options: OutsideServiceOptions): {
  base: string;
  host: string;
  deps: OutsideServiceDeps;
} {
  const base = options.baseUrl.replace(/\/+$/, '');
  return {
    base,
    host: new URL(base).host,
    deps: {
      fetch: options.fetch ?? globalThis.fetch,
      limiter: options.limiter,
      circuit: options.circuit ?? createCircuitBreaker({ failureThreshold: 5, coolDownMs: 30_000 }),
      timeoutMs: options.timeoutMs,
    },
  };
}

export interface OutsideRequest {
  service: NetworkToolService;
  url: URL;
  /** The spacing this host's limit requires between two requests. */
  intervalMs: number;
}

/** Retry-After as seconds or as an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | null, now: number = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Fetches and parses JSON; throws NetworkToolError for every way that can fail. */
export async function getOutsideJson(deps: OutsideServiceDeps, request: OutsideRequest): Promise<unknown> {
  const { service, url, intervalMs } = request;
  const host = url.host;
  return deps.circuit.run(service, host, async () => {
    try {
      // A slot further away than the deadline would spend the call waiting: fail now, as a 429 would.
      await deps.limiter.acquire(host, { intervalMs, maxWaitMs: deps.timeoutMs });
    } catch (err) {
      if (err instanceof RateLimitBacklogError) throw new ToolRateLimitedError(service, host, err.waitMs);
      throw err;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), deps.timeoutMs);
    try {
      let response: Response;
      try {
        response = await deps.fetch(url, { headers: { accept: 'application/json' }, signal: controller.signal });
      } catch {
        // The cause is not kept: undici's errors can quote the URL.
        if (controller.signal.aborted) throw new ToolTimeoutError(service, host, deps.timeoutMs);
        throw new ToolUnavailableError(service, host, null);
      }
      if (response.status === 429) {
        throw new ToolRateLimitedError(service, host, retryAfterMs(response.headers.get('retry-after')));
      }
      if (response.status >= 500) throw new ToolUnavailableError(service, host, response.status);
      if (response.status >= 400) {
        throw new ToolRequestRefusedError(service, host, response.status, `HTTP ${response.status}`);
      }
      if (response.status !== 200) throw new ToolMalformedResponseError(service, host, `HTTP ${response.status}`);
      let text: string;
      try {
        text = await response.text();
      } catch {
        if (controller.signal.aborted) throw new ToolTimeoutError(service, host, deps.timeoutMs);
        throw new ToolUnavailableError(service, host, null);
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new ToolMalformedResponseError(service, host, 'the body is not JSON');
      }
    } finally {
      clearTimeout(timer);
    }
  });
}
