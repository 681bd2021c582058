/**
 * CORS for pages on other origins (api/cors.ts, AMY_CORS_ALLOWED_ORIGINS in platform/config.ts): the setting
 * as parsed, and the policy in front of a real node:http listener. A real browser meets it in
 * test/e2e/cors-browser.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCorsPolicy, type CorsOrigins } from '../../api/cors';
import { loadConfig } from '../../platform/config';

const BASE = { DATABASE_URL: 'postgresql://amy@127.0.0.1:5432/amy' };
const corsSetting = (value?: string) =>
  loadConfig(value === undefined ? BASE : { ...BASE, AMY_CORS_ALLOWED_ORIGINS: value }).AMY_CORS_ALLOWED_ORIGINS;

describe('AMY_CORS_ALLOWED_ORIGINS', () => {
  test('any origin by default; `none`; or a list of origins', () => {
    expect(corsSetting()).toBe('*');
    expect(corsSetting(' * ')).toBe('*');
    expect(corsSetting('none')).toEqual([]);
    expect(corsSetting('https://app.example.com, http://127.0.0.1:5173')).toEqual([
      'https://app.example.com',
      'http://127.0.0.1:5173',
    ]);
  });

  test('each origin exactly as a browser sends it, or the process refuses to start', () => {
    expect(() => corsSetting('')).toThrow(/AMY_CORS_ALLOWED_ORIGINS: `\*`, `none`, or a comma-separated list/);
    expect(() => corsSetting('https://app.example.com/')).toThrow(/not written as a browser sends it: https:\/\/app/);
    expect(() => corsSetting('https://App.example.com')).toThrow(/https:\/\/app\.example\.com/);
    expect(() => corsSetting('https://app.example.com:443')).toThrow(/no default port/);
    expect(() => corsSetting('app.example.com')).toThrow(/not an origin/);
    expect(() => corsSetting('ftp://files.example.com')).toThrow(/not an http or https origin/);
    expect(() => corsSetting('null')).toThrow(/sandboxed and file pages/);
  });
});

describe('the policy', () => {
  let server: http.Server;
  let policy: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  let base: string;

  beforeAll(async () => {
    // What the routes behind the policy answer: a JSON body with the headers clients read.
    server = http.createServer((req, res) => {
      if (policy(req, res)) return;
      res.writeHead(429, { 'Content-Type': 'application/json', 'X-Request-Id': 'req_1', 'Retry-After': '5' });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const send = (origins: CorsOrigins, path: string, init: RequestInit) => {
    policy = createCorsPolicy(origins);
    return fetch(`${base}${path}`, init);
  };
  const preflight = (origin: string, method = 'POST') => ({
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': 'authorization',
    },
  });

  test('by default, a preflight from any origin is granted what the API takes, and an answer shares its headers', async () => {
    const answer = await send('*', '/v1/turns', preflight('http://127.0.0.1:5173'));
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, DELETE');
    expect(answer.headers.get('access-control-allow-headers')?.split(', ')).toEqual(
      expect.arrayContaining(['Authorization', 'Content-Type', 'Idempotency-Key', 'Last-Event-Id']),
    );
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
    expect(answer.headers.get('vary')).toBeNull();

    const stream = await send('*', '/v1/turns/turn_1/events?api_key=k', { headers: { Origin: 'https://any.example' } });
    expect(stream.status).toBe(429);
    expect(stream.headers.get('access-control-allow-origin')).toBe('*');
    expect(stream.headers.get('access-control-expose-headers')).toBe(
      'X-Request-Id, Retry-After, Idempotent-Replayed, Location',
    );
    const document = await send('*', '/openapi.json', { headers: { Origin: 'https://any.example' } });
    expect(document.headers.get('access-control-allow-origin')).toBe('*');
  });

  test('with a list, a listed origin is echoed and any other gets no grant; both answers vary by Origin', async () => {
    const origins = ['https://app.example.com'];
    const listed = await send(origins, '/v1/turns', preflight('https://app.example.com'));
    expect(listed.status).toBe(204);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(listed.headers.get('vary')).toBe('Origin');

    const other = await send(origins, '/v1/turns', preflight('https://elsewhere.example'));
    expect(other.status).toBe(204);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-allow-methods')).toBeNull();
    expect(other.headers.get('vary')).toBe('Origin');

    const answer = await send(origins, '/v1/memory', { headers: { Origin: 'https://elsewhere.example' } });
    expect(answer.status).toBe(429);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(answer.headers.get('access-control-expose-headers')).toBeNull();

    const none = await send([], '/v1/turns', preflight('https://app.example.com'));
    expect(none.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('nothing outside the API and its document: /healthz, /console and unknown paths are left to their routes', async () => {
    for (const path of ['/healthz', '/console', '/v1x', '/openapi.json.bak']) {
      const answer = await send('*', path, preflight('https://any.example', 'GET'));
      expect([path, answer.status, answer.headers.get('access-control-allow-origin')]).toEqual([path, 429, null]);
    }
  });

  test('an OPTIONS request that is no preflight goes to the routes', async () => {
    const answer = await send('*', '/v1/turns', { method: 'OPTIONS', headers: { Origin: 'https://any.example' } });
    expect(answer.status).toBe(429);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  });
});
