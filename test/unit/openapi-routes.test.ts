/**
 * /openapi.json describes the API as it is wired: every route Express registers (the console's page
 * and files excepted: they are a web page, not the API) and the event stream route served ahead of
 * Express, and nothing that is not a route. Each error status lists exactly the codes
 * contracts/errors.ts gives it, and every code's status is documented somewhere.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'pg';
import { createApp, type AppDeps } from '../../api/app';
import { createEventStreamRoute, type EventStreamDeps } from '../../api/streaming/event-stream';
import { buildOpenApiDocument } from '../../api/openapi';
import { ERROR_STATUS } from '../../contracts/errors';

/** The document as plain JSON, read by path. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const refusingPool = {
  query: async () => {
    throw new Error('no database in this test');
  },
} as unknown as Pool;

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** `METHOD /path` of every route in an Express router, nested routers included, `:id` as `{id}`. */
function expressRoutes(stack: Layer[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      return paths.flatMap((p) =>
        Object.keys(layer.route!.methods)
          .filter((m) => m !== '_all')
          .map((m) => `${m.toUpperCase()} ${p.replace(/:(\w+)/g, '{$1}')}`),
      );
    }
    return layer.handle?.stack ? expressRoutes(layer.handle.stack) : [];
  });
}

const doc = buildOpenApiDocument();
const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
  Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
);

test('every route Express registers, and the event stream route, is in the document, and nothing else', () => {
  const app = createApp({
    pool: refusingPool,
    temporal: {},
    taskQueue: 'unused',
    logger: silent,
    maxInFlightTurns: 3,
    bodyLimitBytes: 1024,
    terraReceiver: { keyring: {}, terra: { signingSecret: null, toleranceSeconds: 300, maxBodyBytes: 1024 } },
  } as unknown as AppDeps);
  const registered = expressRoutes((app as unknown as { router: { stack: Layer[] } }).router.stack).filter(
    (route) => !/ \/console(\/|$)/.test(route),
  );
  expect(registered.length).toBeGreaterThan(5);

  // The event stream route takes its requests before Express sees them (api/streaming/event-stream.ts).
  const eventStream = createEventStreamRoute({
    pool: refusingPool,
    hub: {},
    logger: silent,
    replayWindowSeconds: 60,
  } as unknown as EventStreamDeps);
  const res = { setHeader() {}, writeHead() {}, end() {}, on() {}, once() {} } as unknown as ServerResponse;
  const takes = (method: string, url: string) => eventStream({ method, url, headers: {} } as IncomingMessage, res);
  expect(takes('GET', '/v1/turns/turn_01M85TPVMMDDZMJSZNVBJK26YF/events')).toBe(true);
  expect(takes('GET', '/v1/turns/turn_01M85TPVMMDDZMJSZNVBJK26YF')).toBe(false);
  expect(takes('POST', '/v1/turns/turn_01M85TPVMMDDZMJSZNVBJK26YF/events')).toBe(false);

  expect([...registered, 'GET /v1/turns/{id}/events'].sort()).toEqual([...documented].sort());
});

test("each error status lists exactly its codes, and every code's status is documented", () => {
  const documentedStatuses = new Set<number>();
  for (const ops of Object.values(doc.paths)) {
    for (const op of Object.values(ops) as Array<{ responses: Record<string, { content?: Record<string, Json> }> }>) {
      for (const [status, response] of Object.entries(op.responses)) {
        documentedStatuses.add(Number(status));
        if (Number(status) < 400 || !response.content) continue;
        const codes = response.content['application/json']?.schema?.properties?.error?.properties?.code?.enum;
        if (!codes) continue;
        const expected = Object.entries(ERROR_STATUS)
          .filter(([, s]) => s === Number(status))
          .map(([code]) => code);
        expect(codes.sort()).toEqual(expected.sort());
      }
    }
  }
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    // upstream_unavailable is a turn's failure (Turn.error, turn.failed), not an HTTP answer; it shares 503.
    expect([code, documentedStatuses.has(status)]).toEqual([code, true]);
  }
});

test('the event stream is described per event type, with its payload schema', () => {
  const ok = (doc.paths['/v1/turns/{id}/events'] as Json).get.responses['200'].content;
  expect(Object.keys(ok).sort()).toEqual(['application/json', 'text/event-stream']);
  const variants = ok['text/event-stream'].schema.oneOf as Array<{ properties: Json }>;
  const completed = variants.find((v) => v.properties.event.enum[0] === 'turn.completed')!;
  expect(completed.properties.data).toMatchObject({ type: 'string', contentMediaType: 'application/json' });
  expect(completed.properties.data.contentSchema.properties.result.required).toContain('answer');
  // ?api_key= is for browsers' EventSource, on this route only.
  const security = (op: string, method: string) => (doc.paths as Json)[op][method].security;
  expect(security('/v1/turns/{id}/events', 'get')).toContainEqual({ apiKeyQuery: [] });
  expect(security('/v1/turns', 'post')).not.toContainEqual({ apiKeyQuery: [] });
});
