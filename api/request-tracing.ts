/**
 * Each API request under /v1 is a server span (`POST /v1/turns`), the root of what it does: a turn's
 * creation starts the turn's trace. The span names the route, never the query string, and nothing of the
 * body; health probes, the console's files and the codec server are not traced.
 *
 * A caller's W3C `traceparent` is a client's say, and its sampled flag would have the service record and
 * export every request of any client that sets it. So by default the request starts a trace of its own,
 * whose sampling the service's sampler decides (OTEL_TRACES_SAMPLER's root sampler), and keeps the caller's
 * span as a link: a backend shows the two side by side. Continuing the caller's trace id instead would not do:
 * the ratio sampler decides from the id's bits, which the caller chose. With AMY_OTEL_TRUST_TRACEPARENT=true
 * (callers the operator trusts) the caller's span is the parent: the trace goes on under it and, with a
 * parent-based sampler, its sampled flag decides.
 */
import type http from 'node:http';
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import { tracingEnabled } from '../platform/spans';

const TRACED_PATH = /^\/v1(\/|$)/;

export interface RequestTracingOptions {
  /** AMY_OTEL_TRUST_TRACEPARENT: a caller's traceparent is the request span's parent (see the module comment). */
  trustTraceparent: boolean;
}

/** Where a request's span starts: under the caller's span when it is trusted, else in a trace of its own. */
function startingPoint(req: http.IncomingMessage, options: RequestTracingOptions): { parent: Context; links: Link[] } {
  const callers = propagation.extract(ROOT_CONTEXT, req.headers);
  if (options.trustTraceparent) return { parent: callers, links: [] };
  const caller = trace.getSpanContext(callers);
  return { parent: ROOT_CONTEXT, links: caller && isSpanContextValid(caller) ? [{ context: caller }] : [] };
}

/** The request listener `handler`, each /v1 request in a span while tracing is on. */
export function traceRequests(handler: http.RequestListener, options: RequestTracingOptions): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').replace(/[?#].*$/s, '');
    if (!tracingEnabled() || !TRACED_PATH.test(path)) return handler(req, res);
    const method = req.method ?? 'GET';
    const { parent, links } = startingPoint(req, options);
    const span = trace
      .getTracer('amy')
      .startSpan(
        method,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: path }, links },
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
