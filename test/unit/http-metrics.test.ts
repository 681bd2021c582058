/**
 * The API's request metrics (api/http-metrics.ts) on a small Express app wired as api/app.ts wires the
 * API: the middleware first, a key check on /v1 before any route, routers with whole paths, the 404 for
 * no route and the error envelope last. Each check reads how much a series moved over real HTTP requests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Router } from 'express';
import { ApiError, errorMiddleware, notFound } from '../../api/errors';
import { httpMetrics } from '../../api/http-metrics';
import { processRegistry } from '../../platform/metrics';
import { parsePrometheusText, total, type Sample } from '../support/prometheus';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const TURN_ID = 'turn_01M85TPVMMDDZMJSZNVBJK26YF';
const KEY = { authorization: 'Bearer test-key' };

let server: http.Server;
let base: string;
/** Settled by POST /v1/turns, which never answers: when it has the request, and when its client has left. */
let arrived: () => void;
let left: () => void;

beforeAll(async () => {
  const app = express();
  app.use(httpMetrics());
  app.use('/v1', (req, _res, next) =>
    next(req.get('authorization') ? undefined : new ApiError('authentication_required', 'No key.')),
  );
  const routes = Router();
  routes.get('/v1/turns/:id', (req, res) => {
    if (req.params.id !== TURN_ID) throw notFound('Turn');
    res.json({ id: TURN_ID });
  });
  routes.post('/v1/turns', (_req, res) => {
    res.on('close', () => left());
    arrived();
  });
  app.use(routes);
  app.use((req, _res, next) => next(new ApiError('not_found', `No route for ${req.method} ${req.path}.`)));
  app.use(errorMiddleware(silent));
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const read = async (): Promise<Sample[]> => parsePrometheusText(await processRegistry().metrics());

/** How much each series named moves while `act` runs, and what the scrape after it holds. */
async function measure(act: () => Promise<unknown>) {
  const before = await read();
  await act();
  const after = await read();
  return {
    after,
    moved: (name: string, labels: Record<string, string> = {}) =>
      total(after, name, labels) - total(before, name, labels),
  };
}

async function status(method: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${base}${path}`, { method, headers });
  await res.arrayBuffer();
  return res.status;
}

const requests = 'amy_http_requests_total';
const durations = 'amy_http_request_duration_seconds_count';

test('a request is counted and timed under its route’s template, never its path', async () => {
  const { moved, after } = await measure(async () => {
    expect(await status('GET', `/v1/turns/${TURN_ID}`, KEY)).toBe(200);
    expect(await status('HEAD', `/v1/turns/${TURN_ID}`, KEY)).toBe(200);
  });
  expect(moved(requests, { method: 'GET', route: '/v1/turns/:id', status: '200' })).toBe(1);
  expect(moved(requests, { method: 'HEAD', route: '/v1/turns/:id', status: '200' })).toBe(1);
  expect(moved(durations, { method: 'GET', route: '/v1/turns/:id' })).toBe(1);
  expect(moved('amy_http_request_duration_seconds_sum', { method: 'GET', route: '/v1/turns/:id' })).toBeGreaterThan(0);
  expect(after.filter((s) => s.name.startsWith('amy_http_') && s.labels.route?.includes(TURN_ID))).toEqual([]);
});

test('an error answer carries its status, and its error code is counted', async () => {
  const { moved } = await measure(async () => {
    expect(await status('GET', '/v1/turns/turn_01M85TPVMMDDZMJSZNVBJK26YZ', KEY)).toBe(404);
  });
  expect(moved(requests, { method: 'GET', route: '/v1/turns/:id', status: '404' })).toBe(1);
  expect(moved('amy_api_errors_total', { code: 'not_found' })).toBe(1);
  expect(moved('amy_api_errors_total')).toBe(1);
});

test('a request refused before its route ran is under the template of the route its path is', async () => {
  const { moved } = await measure(async () => {
    expect(await status('GET', `/v1/turns/${TURN_ID}/`)).toBe(401);
    expect(await status('POST', '/v1/turns')).toBe(401);
    // No route takes DELETE there: the path alone names no route.
    expect(await status('DELETE', `/v1/turns/${TURN_ID}`)).toBe(401);
  });
  expect(moved(requests, { method: 'GET', route: '/v1/turns/:id', status: '401' })).toBe(1);
  expect(moved(requests, { method: 'POST', route: '/v1/turns', status: '401' })).toBe(1);
  expect(moved(requests, { method: 'DELETE', route: 'unmatched', status: '401' })).toBe(1);
  expect(moved('amy_api_errors_total', { code: 'authentication_required' })).toBe(3);
});

test('a request no route takes is `unmatched`, whatever its path', async () => {
  const { moved, after } = await measure(async () => {
    expect(await status('GET', `/v1/no-such-thing/${TURN_ID}`, KEY)).toBe(404);
    expect(await status('GET', `/elsewhere/${TURN_ID}`)).toBe(404);
  });
  expect(moved(requests, { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
  expect(moved(durations, { method: 'GET', route: 'unmatched' })).toBe(2);
  expect(after.filter((s) => s.name.startsWith('amy_http_') && s.labels.route?.includes(TURN_ID))).toEqual([]);
});

test('a request whose client left before its answer is counted with status 499', async () => {
  const { moved } = await measure(async () => {
    const hasRequest = new Promise<void>((resolve) => (arrived = resolve));
    const clientLeft = new Promise<void>((resolve) => (left = resolve));
    const client = new AbortController();
    const request = fetch(`${base}/v1/turns`, { method: 'POST', headers: KEY, signal: client.signal }).catch(
      () => 'aborted',
    );
    await hasRequest;
    client.abort();
    await expect(request).resolves.toBe('aborted');
    await clientLeft;
  });
  expect(moved(requests, { method: 'POST', route: '/v1/turns', status: '499' })).toBe(1);
  expect(moved(requests, { method: 'POST', route: '/v1/turns', status: '200' })).toBe(0);
  expect(moved(durations, { method: 'POST', route: '/v1/turns' })).toBe(1);
});
