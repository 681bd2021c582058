/**
 * Each API request under /v1 is a server span (`POST /v1/turns`), the root of what it does: a turn's
 * creation starts the turn's trace. A caller's W3C `traceparent` is honoured, so a client that traces
 * its own requests sees the turn under its call. The span names the route, never the query string,
 * and nothing of the body; health probes, the console's files and the codec server are not traced.
 */
import type http from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import { tracingEnabled } from '../platform/spans';

const TRACED_PATH = /^\/v1(\/|$)/;

/** The request listener `handler`, each /v1 request in a span while tracing is on. */
export function traceRequests(handler: http.RequestListener): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').replace(/[?#].*$/s, '');
    if (!tracingEnabled() || !TRACED_PATH.test(path)) return handler(req, res);
    const method = req.method ?? 'GET';
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = trace
      .getTracer('amy')
      .startSpan(
        method,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: path } },
        parent,
      );
    const active = trace.setSpan(parent, span);
    // Express reads the body in the request's own 'data' events: bound, they run in the span too.
    context.bind(active, req);
    context.bind(active, res);
    res.once('close', () => {
      // Express leaves the route that answered on the request.
      const route = (req as { route?: { path?: unknown } }).route?.path;
      if (typeof route === 'string') {
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${method} ${route}`);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
      }
      span.end();
    });
    context.with(active, () => handler(req, res));
  };
}
