/**
 * What /openapi.json (and docs/api.md) promise about the HTTP surface, checked against the running code:
 *
 * - `?api_key=` is refused (401 authentication_required) on every route but the event stream, the
 *   routes that need no key (/healthz, /openapi.json, the console, and the codec server on its own
 *   listener) and unknown paths included, its name percent-encoded or not; the document lists the key in the query only for the
 *   event stream, and a 401 for every other operation;
 * - the JSON body parser runs only after authentication, and only on /v1: a caller without a key is
 *   refused before its body is parsed, and a body sent anywhere else is never parsed;
 * - the headers and parameters the code sends or reads are in the document: `Idempotent-Replayed` on a
 *   replayed creation, `Retry-After` on every 429 and on the 409 of a key still in use, `last_event_id`
 *   and `Last-Event-Id` on the event stream; and a reused Idempotency-Key gets the status the document
 *   gives its code.
 */
import { ERROR_STATUS } from '../../contracts/errors';
import { freePort } from '../../dev/stack/ports';
import { api, thanks, type JsonResponse } from '../support/http';
import { startTestService, type TestService } from '../support/service';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

let svc: TestService;
let user: { userId: string; apiKey: string };
let turnId: string;
let doc: Json;
/** The codec server's own listener (docs/operations.md#the-codec-server). */
let codec: string;

beforeAll(async () => {
  const codecPort = await freePort();
  codec = `http://127.0.0.1:${codecPort}`;
  svc = await startTestService({
    env: { AMY_CODEC_OPERATORS: `ops:${'t'.repeat(32)}`, AMY_CODEC_PORT: String(codecPort) },
  });
  user = await svc.createUser();
  const turn = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...thanks, stream: false } });
  expect(turn.status).toBe(200);
  turnId = turn.body.id as string;
  doc = (await api(svc.url, 'GET', '/openapi.json')).body;
});
afterAll(async () => {
  await svc?.close();
});

function expectRefusedKeyInUrl(res: JsonResponse<Json>, what: string) {
  expect([what, res.status, res.body?.error?.code]).toEqual([what, 401, 'authentication_required']);
  expect(res.body.error.message).toContain('Authorization: Bearer');
}

/** Every operation of the document, with a concrete path (the path parameters of a real turn, or plausible ids). */
function documentedOperations(): Array<{ method: string; path: string; operation: Json; template: string }> {
  const values: Record<string, string> = {
    id: turnId,
    finding_id: 'ds-001',
    external_id: 'w-1',
  };
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      operation,
      path: template
        .replace('/v1/memory/{id}', '/v1/memory/mem_01ARZ3NDEKTSV4RRFFQ69G5FAV')
        .replace(/\{(\w+)\}/g, (_, name: string) => values[name]),
    })),
  );
}

describe('?api_key= is refused everywhere but the event stream, as the document says', () => {
  test('every operation of the document: the key in the query works only where the document lists it', async () => {
    const operations = documentedOperations();
    expect(operations.length).toBeGreaterThan(20);
    for (const { method, path, operation, template } of operations) {
      const what = `${method} ${template}`;
      const takesKeyInQuery = (operation.security ?? []).some((s: Json) => 'apiKeyQuery' in s);
      const res = await api(svc.url, method, `${path}?api_key=${user.apiKey}`, {
        body: method === 'POST' || method === 'PUT' ? {} : undefined,
      });
      if (takesKeyInQuery) {
        expect([what, res.status]).toEqual([what, 200]);
      } else {
        expectRefusedKeyInUrl(res, what);
        expect([what, Object.keys(operation.responses)]).toEqual([what, expect.arrayContaining(['401'])]);
      }
    }
    // Only the event stream lists it.
    expect(operations.filter((o) => (o.operation.security ?? []).some((s: Json) => 'apiKeyQuery' in s))).toEqual([
      expect.objectContaining({ method: 'GET', template: '/v1/turns/{id}/events' }),
    ]);
  });

  test('the routes outside the document too: the console, the codec server, unknown paths; a percent-encoded name is the same parameter', async () => {
    for (const [method, path] of [
      ['GET', '/console'],
      ['GET', '/console/console.js'],
      ['GET', '/console/amy-sdk.js'],
      ['GET', '/nowhere'],
      ['GET', '/v1/nowhere'],
    ]) {
      expectRefusedKeyInUrl(await api(svc.url, method, `${path}?api_key=${user.apiKey}`), `${method} ${path}`);
    }
    for (const [method, path] of [
      ['GET', '/codec/login'],
      ['POST', '/codec/decode'],
      ['GET', '/nowhere'],
    ]) {
      expectRefusedKeyInUrl(await api(codec, method, `${path}?api_key=${user.apiKey}`), `codec: ${method} ${path}`);
    }
    for (const query of [`api%5Fkey=${user.apiKey}`, `%61pi_key=${user.apiKey}`, 'api_key=', 'x=1&api_key=nope']) {
      expectRefusedKeyInUrl(await api(svc.url, 'GET', `/healthz?${query}`), `/healthz?${query}`);
      expectRefusedKeyInUrl(
        await api(svc.url, 'GET', `/v1/turns/${turnId}?${query}`, { key: user.apiKey }),
        `/v1/turns?${query}`,
      );
    }
    // The event stream takes it, percent-encoded or not.
    for (const name of ['api_key', 'api%5Fkey']) {
      expect((await api(svc.url, 'GET', `/v1/turns/${turnId}/events?${name}=${user.apiKey}`)).status).toBe(200);
    }
    // Without a key in the URL, the routes that need none still answer.
    expect((await api(svc.url, 'GET', '/healthz')).status).toBe(200);
    expect((await api(svc.url, 'GET', '/openapi.json?x=1')).status).toBe(200);
  });

  test('the document says so in words too', () => {
    expect(doc.info.description).toMatch(/\?api_key=.*GET \/v1\/turns\/\{id\}\/events/s);
  });
});

describe('the JSON body is parsed only after authentication, and only on /v1', () => {
  const malformed = '{"messages": [';

  test('without a key, a malformed or oversized body on /v1 is a 401: the body is never parsed', async () => {
    const huge = JSON.stringify({
      messages: [{ role: 'user', content: 'x'.repeat(2 * svc.config.AMY_BODY_LIMIT_BYTES) }],
    });
    for (const rawBody of [malformed, huge]) {
      for (const path of ['/v1/turns', '/v1/memory', '/v1/data/daily', '/v1/nowhere']) {
        const res = await api(svc.url, 'POST', path, { rawBody });
        expect([path, res.status, res.body.error.code]).toEqual([path, 401, 'authentication_required']);
      }
    }
  });

  test('with a key, /v1 parses it (400 invalid_json)', async () => {
    const res = await api(svc.url, 'POST', '/v1/memory', { key: user.apiKey, rawBody: malformed });
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_json']);
  });

  test('a body sent anywhere but /v1 is never parsed: the route answers as if there were none', async () => {
    for (const [method, path] of [
      ['POST', '/healthz'],
      ['POST', '/openapi.json'],
      ['POST', '/console'],
      ['PUT', '/console/console.js'],
      ['POST', '/nowhere'],
    ]) {
      const res = await api(svc.url, method, path, { rawBody: malformed });
      expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 404, 'not_found']);
    }
  });
});

describe('the headers and parameters the code uses are in the document', () => {
  const createTurn = () => doc.paths['/v1/turns'].post;

  test('Idempotent-Replayed on a replayed creation: sent by the code, described on 200 and 201', async () => {
    const first = await api(svc.url, 'POST', '/v1/turns', {
      key: user.apiKey,
      body: thanks,
      headers: { 'idempotency-key': 'promised-1' },
    });
    const again = await api(svc.url, 'POST', '/v1/turns', {
      key: user.apiKey,
      body: thanks,
      headers: { 'idempotency-key': 'promised-1' },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    for (const status of [first.status, again.status, 200]) {
      expect(createTurn().responses[String(status)].headers['Idempotent-Replayed']).toMatchObject({
        schema: { type: 'string', enum: ['true'] },
      });
    }
    await svc.temporal.workflow.getHandle(first.body.id).result();
  });

  test('Retry-After on every 429 of every operation, and on the 409 of createTurn (a key still in use)', () => {
    let seen = 0;
    for (const { operation, method, template } of documentedOperations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (status !== '429' && !(status === '409' && template === '/v1/turns' && method === 'POST')) continue;
        seen++;
        expect([method, template, status, response.headers?.['Retry-After']?.schema]).toEqual([
          method,
          template,
          status,
          { type: 'integer', minimum: 1 },
        ]);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(3);
  });

  test('the event stream reads last_event_id in the query and Last-Event-Id in a header: both are in the document, and both are read', async () => {
    const parameters = doc.paths['/v1/turns/{id}/events'].get.parameters as Json[];
    expect(parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'last_event_id', in: 'query', required: false }),
        expect.objectContaining({ name: 'Last-Event-Id', in: 'header', required: false }),
      ]),
    );
    for (const query of ['?last_event_id=x', '']) {
      const res = await api(svc.url, 'GET', `/v1/turns/${turnId}/events${query}`, {
        key: user.apiKey,
        headers: { accept: 'text/event-stream', ...(query ? {} : { 'last-event-id': 'x' }) },
      });
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, 'invalid_field']);
    }
  });

  test('a reused Idempotency-Key gets the status the document gives idempotency_key_reused', async () => {
    const status = ERROR_STATUS.idempotency_key_reused;
    const other = { messages: [{ role: 'user', content: 'thank you!' }] };
    const res = await api(svc.url, 'POST', '/v1/turns', {
      key: user.apiKey,
      body: other,
      headers: { 'idempotency-key': 'promised-1' },
    });
    expect([res.status, res.body.error.code]).toEqual([status, 'idempotency_key_reused']);
    const documented = createTurn().responses[String(status)];
    expect(documented.content['application/json'].schema.properties.error.properties.code.enum).toContain(
      'idempotency_key_reused',
    );
    expect(createTurn().parameters.find((p: Json) => p.name === 'Idempotency-Key').description).toContain(
      `${status} idempotency_key_reused`,
    );
  });
});
