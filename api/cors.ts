/**
 * CORS for pages on other origins (docs/operations.md#browsers-on-other-origins): the contract's browser
 * sample opens `EventSource(…/events?api_key=…)` from the app's own origin, and a browser hands such a page
 * nothing of the answer unless the API grants it. Served ahead of Express and of the event stream route
 * (api/server.ts), because a preflight carries no key: the key check, or the refusal of `?api_key=` off the
 * event stream, would answer it 401, and a browser takes only a 2xx as a preflight's yes.
 *
 * - Granted on the API (`/v1…`) and its document (`/openapi.json`) only: `/healthz` is for probes and
 *   `/console` is served to its own origin.
 * - `*` by default (AMY_CORS_ALLOWED_ORIGINS). CORS keeps a page from borrowing what the browser adds on
 *   its own: cookies, HTTP authentication, the network the browser is on. This API reads none of them; every
 *   request carries its key itself, in `Authorization` or `?api_key=`, which another origin's page has only
 *   if the user gave it to it, and then any HTTP client would do as much. A literal `*` also rules out
 *   credentials: a browser sends no cookie with a request whose answer it may share under `*`.
 * - Never `Access-Control-Allow-Credentials`: there is no credential mode to opt into.
 * - With a list, an origin on it is echoed (with `Vary: Origin`, since the answer then depends on it); any
 *   other origin gets no grant, so its browser keeps the answer from it and fails its preflights.
 * - The answer's headers that clients read are exposed: `X-Request-Id` (every answer), `Retry-After`
 *   (429, 503), `Idempotent-Replayed` (a replayed creation) and `Location` (a blocking turn cut short).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** `*`, or the origins granted (none at all: an empty list). */
export type CorsOrigins = '*' | readonly string[];

const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, Idempotent-Replayed, Location';
/** Every method a route of the API takes. */
const ALLOWED_METHODS = 'GET, POST, PUT, DELETE';
/**
 * The request headers the API reads that a browser does not send on its own: the key, a JSON body's type,
 * a creation's key, a stream's resume position (the SDK's fetch transport sends it as a header), and a trace's.
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Last-Event-Id, traceparent, tracestate';
/** How long a browser may reuse a preflight's answer: Chromium caps it at 2 h, Firefox at 24 h. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

const CORS_PATH = /^\/(v1(\/|$)|openapi\.json$)/;

/**
 * Returns the CORS step of the request listener: it answers a preflight itself (and returns true), or sets
 * the grant on the response for the route that will answer it (and returns false).
 */
export function createCorsPolicy(origins: CorsOrigins): (req: IncomingMessage, res: ServerResponse) => boolean {
  const listed = origins === '*' ? null : new Set(origins);
  /** The Access-Control-Allow-Origin value for this request's Origin, or null for no grant. */
  const grantFor = (origin: string | undefined): string | null => {
    if (listed === null) return '*';
    return origin !== undefined && listed.has(origin) ? origin : null;
  };

  return (req, res) => {
    const path = (req.url ?? '/').replace(/[?#].*$/s, '');
    if (!CORS_PATH.test(path)) return false;
    const grant = grantFor(req.headers.origin);
    // With a list, the same URL is answered differently per Origin: a shared cache must key on it.
    if (listed !== null) res.setHeader('Vary', 'Origin');
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (preflight) {
      // Answered here whatever the path: the request that follows meets the route's own answer (404, 405…).
      // Without a grant the browser stops there.
      if (grant !== null) {
        res.setHeader('Access-Control-Allow-Origin', grant);
        res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
        res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
        res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      }
      res.writeHead(204).end();
      return true;
    }
    if (grant !== null) {
      res.setHeader('Access-Control-Allow-Origin', grant);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    return false;
  };
}
