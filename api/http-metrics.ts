/**
 * Request metrics for the API's Express app (docs/operations.md#metrics): every request counted by
 * method, route template and status, and timed by method and route template, as it is answered.
 *
 * The route is a template, never the path: `/v1/turns/:id` whatever turn was asked for, since an id in a
 * label would make a series per turn and put ids where no id belongs. It is the route Express matched
 * (the app's routers are mounted at the root and declare whole paths, so a route's path is the whole
 * template). A request refused before any route ran (no key or a bad one, a body that does not parse or
 * is too large) is under the template of the documented route its method and path are (api/route-table.ts),
 * so a route's 401s and 413s are its own; a request that is no route at all is `unmatched`.
 *
 * The event stream route is served ahead of Express (api/streaming/event-stream.ts), so its streams, held open for
 * a whole turn, never reach these histograms; it has metrics of its own (`amy_sse_*`).
 */
import type { Request, RequestHandler } from 'express';
import { metrics } from '../platform/metrics';
import { ROUTES } from './route-table';

const UNMATCHED = 'unmatched';

/** nginx's status for a client that closed its connection before the answer was sent. */
const CLIENT_CLOSED_REQUEST = 499;

/** The documented routes, matched as Express matches them: any case, with or without a trailing slash. */
const DOCUMENTED_ROUTES = Object.values(ROUTES).map(({ method, path }) => {
  const segments = path.split('/').map((segment) => (/^\{\w+\}$/.test(segment) ? '[^/]+' : escapeRegExp(segment)));
  return {
    methods: method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()],
    pattern: new RegExp(`^${segments.join('/')}/?$`, 'i'),
    template: path.replace(/\{(\w+)\}/g, ':$1'),
  };
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function routeTemplate(req: Request): string {
  const matched: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof matched === 'string') return matched;
  // The path as it arrived: a middleware mounted at a path (`app.use('/v1', …)`) sees req.url without it.
  const path = req.originalUrl.split('?')[0];
  const documented = DOCUMENTED_ROUTES.find((route) => route.methods.includes(req.method) && route.pattern.test(path));
  return documented?.template ?? UNMATCHED;
}

/** First in the app, so that the time counted includes every middleware's. */
export function httpMetrics(): RequestHandler {
  return (req, res, next) => {
    const ended = metrics.httpRequestStarted();
    let recorded = false;
    const record = (status: number) => {
      if (recorded) return;
      recorded = true;
      ended({ method: req.method, route: routeTemplate(req), status });
    };
    // 'finish': the whole answer is written. A 'close' before it: the client left first (a blocking
    // POST /v1/turns it stopped waiting for), whatever status had been set by then.
    res.once('finish', () => record(res.statusCode));
    res.once('close', () => record(CLIENT_CLOSED_REQUEST));
    next();
  };
}
