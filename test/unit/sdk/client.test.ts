/**
 * Requests through `@amy/sdk` against a scripted API at the fetch boundary: errors by status and
 * code, retries (and which requests may be repeated), idempotent creation, a timeout that covers the
 * body, memory pages you can await or iterate, and the user's Terra connections.
 */
import {
  Amy,
  AmyError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  AuthenticationError,
  BadRequestError,
  ConcurrencyLimitError,
  CostCapExceededError,
  IdempotencyKeyReusedError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
  TurnEventsExpiredError,
  type FetchLike,
  type Memory,
  type TerraConnection,
  type TerraConnectionStatus,
} from '@amy/sdk';
import { json, streamingResponse } from './fake-api';

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string | undefined;
}

/** A fetch that answers each request with the next of `answers` (a Response, or an Error to throw). */
function scripted(answers: Array<Response | Error | ((req: Seen, init: RequestInit) => Response)>) {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (input, init = {}) => {
    const req = {
      method: init.method ?? 'GET',
      url: new URL(input),
      headers: new Headers(init.headers),
      body: init.body as string,
    };
    seen.push(req);
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    return typeof answer === 'function' ? answer(req, init) : answer.clone();
  };
  return { fetch, seen };
}

const amyWith = (fetch: FetchLike, extra: Partial<ConstructorParameters<typeof Amy>[0]> = {}) =>
  new Amy({ apiKey: 'amy_k', baseUrl: 'http://api.test/', fetch, retryDelayMs: 1, maxRetryDelayMs: 5, ...extra });

const envelope = (code: string, status: number, headers: Record<string, string> = {}) =>
  json(
    { error: { code, message: `it is ${code}`, request_id: 'req_01ABC', docs_url: `https://docs/#${code}` } },
    status,
    headers,
  );

const turn = { id: 'turn_01HX2K3M4N5P6Q7R8S9T0V1W2X', status: 'queued', last_event_id: 0 };
const networkDown = () => Object.assign(new TypeError('fetch failed'), { cause: new Error('ECONNREFUSED') });

describe('errors', () => {
  test.each([
    [400, 'invalid_field', BadRequestError],
    [401, 'invalid_api_key', AuthenticationError],
    [404, 'not_found', NotFoundError],
    [404, 'turn_events_expired', TurnEventsExpiredError],
    [422, 'idempotency_key_reused', IdempotencyKeyReusedError],
    [429, 'concurrency_limit_exceeded', ConcurrencyLimitError],
    [429, 'cost_cap_exceeded', CostCapExceededError],
  ])('%i %s is a %p carrying status, code, message and request id', async (status, code, Class) => {
    const { fetch } = scripted([envelope(code, status)]);
    const error = await amyWith(fetch)
      .turns.get(turn.id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({
      status,
      code,
      message: `it is ${code}`,
      requestId: 'req_01ABC',
      docsUrl: `https://docs/#${code}`,
    });
  });

  test.each([...Object.getOwnPropertyNames(Object.prototype), 'prototype'])(
    'a code spelled like an inherited property (%s) is judged by its status, like any code the SDK does not know',
    async (code) => {
      const { fetch } = scripted([envelope(code, 400)]);
      const error = await amyWith(fetch)
        .turns.get(turn.id)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 400, code });
    },
  );

  test('a concurrency limit is a RateLimitError too, and it is not retried (a slot frees only when a turn ends)', async () => {
    const { fetch, seen } = scripted([envelope('concurrency_limit_exceeded', 429, { 'retry-after': '5' })]);
    const error = await amyWith(fetch)
      .turns.create({ messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(seen).toHaveLength(1);
  });

  test('a cost cap is a RateLimitError too, and it is not retried (it lasts until its UTC day or month ends)', async () => {
    const { fetch, seen } = scripted([envelope('cost_cap_exceeded', 429, { 'retry-after': '36000' })]);
    const error = await amyWith(fetch)
      .turns.create({ messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toBeInstanceOf(CostCapExceededError);
    expect(error.retryAfterMs).toBe(36_000_000);
    expect(seen).toHaveLength(1);
  });

  test('a connection that never answers is an APIConnectionError with the cause', async () => {
    const { fetch } = scripted([networkDown()]);
    const error = await amyWith(fetch, { maxRetries: 1 })
      .turns.get(turn.id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).toMatchObject({ code: 'connection_error', status: undefined, requestId: undefined });
    expect((error as Error).message).toContain('fetch failed');
  });

  test('no API key is refused at construction, with the way to fix it', () => {
    const saved = process.env.AMY_API_KEY;
    delete process.env.AMY_API_KEY;
    try {
      expect(() => new Amy({ baseUrl: 'http://api.test' })).toThrow(/AMY_API_KEY/);
    } finally {
      if (saved !== undefined) process.env.AMY_API_KEY = saved;
    }
  });

  test('the key and address come from AMY_API_KEY and AMY_BASE_URL when not passed', async () => {
    const { fetch, seen } = scripted([json(turn)]);
    process.env.AMY_API_KEY = 'amy_from_env';
    process.env.AMY_BASE_URL = 'http://env.test:9999';
    try {
      await new Amy({ fetch }).turns.get(turn.id);
    } finally {
      delete process.env.AMY_API_KEY;
      delete process.env.AMY_BASE_URL;
    }
    expect(seen[0].url.origin).toBe('http://env.test:9999');
    expect(seen[0].headers.get('authorization')).toBe('Bearer amy_from_env');
  });
});

describe('retries', () => {
  test('5xx and 429 are retried, after Retry-After when given', async () => {
    const { fetch, seen } = scripted([
      envelope('service_unavailable', 503, { 'retry-after': '0' }),
      envelope('x', 429),
      json(turn),
    ]);
    expect(await amyWith(fetch).turns.get(turn.id)).toEqual(turn);
    expect(seen).toHaveLength(3);
  });

  test('past maxRetries the last error is thrown', async () => {
    const { fetch, seen } = scripted([envelope('internal_error', 500)]);
    await expect(amyWith(fetch, { maxRetries: 2 }).turns.get(turn.id)).rejects.toBeInstanceOf(InternalServerError);
    expect(seen).toHaveLength(3);
  });

  test('turns.create sends a fresh Idempotency-Key and the same one again when it retries after a lost response', async () => {
    const { fetch, seen } = scripted([networkDown(), envelope('service_unavailable', 503), json(turn, 201)]);
    const amy = amyWith(fetch);
    expect(await amy.turns.create({ messages: [{ role: 'user', content: 'How did I sleep?' }] })).toEqual(turn);
    const keys = seen.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(
      seen.every((r) => r.body === JSON.stringify({ messages: [{ role: 'user', content: 'How did I sleep?' }] })),
    ).toBe(true);
    // A second create is a second turn: a key of its own.
    await amy.turns.create({ messages: [{ role: 'user', content: 'again' }] });
    expect(seen[3].headers.get('idempotency-key')).not.toBe(keys[0]);
  });

  test('a caller-chosen idempotencyKey is sent as given', async () => {
    const { fetch, seen } = scripted([json(turn, 201)]);
    await amyWith(fetch).turns.create({ messages: [{ role: 'user', content: 'x' }] }, { idempotencyKey: 'order-42' });
    expect(seen[0].headers.get('idempotency-key')).toBe('order-42');
  });

  test('a memory write has no idempotency key, so it is not repeated after a network failure (it may have landed)', async () => {
    const { fetch, seen } = scripted([networkDown(), json({ id: 'mem_1' }, 201)]);
    await expect(amyWith(fetch).memory.create({ text: 'Vegetarian.', category: 'preference' })).rejects.toBeInstanceOf(
      APIConnectionError,
    );
    expect(seen).toHaveLength(1);
  });

  test('a delete retried after a lost response treats 404 as done; a plain 404 is still an error', async () => {
    const lost = scripted([networkDown(), envelope('not_found', 404)]);
    await expect(amyWith(lost.fetch).memory.delete('mem_01')).resolves.toBeUndefined();
    expect(lost.seen.map((r) => r.method)).toEqual(['DELETE', 'DELETE']);
    const plain = scripted([envelope('not_found', 404)]);
    await expect(amyWith(plain.fetch).memory.delete('mem_01')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('timeouts cover the body', () => {
  afterEach(() => jest.useRealTimers());

  test('headers at once and then a stalled body is a timeout, not a hang', async () => {
    jest.useFakeTimers();
    const { fetch } = scripted([(_req, init) => streamingResponse('{"id":', 'hang', init.signal ?? undefined)]);
    const pending = amyWith(fetch, { timeoutMs: 5_000, maxRetries: 0 })
      .turns.get(turn.id)
      .catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(5_000);
    const error = await pending;
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect((error as Error).message).toContain('5000 ms');
  });

  test('a blocking create (stream: false) is given minutes, not the default timeout', async () => {
    jest.useFakeTimers();
    const finished = { ...turn, status: 'completed' };
    let answer!: (r: Response) => void;
    const { fetch } = scripted([() => json(finished)]);
    const slowFetch: FetchLike = (input, init) =>
      new Promise((resolve) => (answer = (r) => resolve(r))).then(() => fetch(input, init));
    const pending = amyWith(slowFetch, { timeoutMs: 1_000 }).turns.create({
      messages: [{ role: 'user', content: 'x' }],
      stream: false,
    });
    await jest.advanceTimersByTimeAsync(5 * 60_000);
    answer(json(finished));
    expect(await pending).toEqual(finished);
  });
});

describe('memory pages', () => {
  const entry = (i: number): Memory => ({
    id: `mem_${i}`,
    text: `entry ${i}`,
    category: 'goal',
    created_at: '2026-11-23T10:00:00.000Z',
    source_turn_id: null,
    confidence: 1,
    meta: null,
  });

  function pagedApi(total: number, pageSize: number) {
    return scripted([
      (req) => {
        const start = Number(req.url.searchParams.get('cursor') ?? 0);
        const data = Array.from({ length: Math.min(pageSize, total - start) }, (_, i) => entry(start + i));
        const more = start + pageSize < total;
        return json({ data, next_cursor: more ? String(start + pageSize) : null, has_more: more });
      },
    ]);
  }

  test('awaiting list() gives the first page as { data, next_cursor, has_more }', async () => {
    const { fetch, seen } = pagedApi(5, 2);
    const page = await amyWith(fetch).memory.list({ category: 'goal', limit: 2 });
    expect(page).toMatchObject({ data: [entry(0), entry(1)], next_cursor: '2', has_more: true });
    expect(seen[0].url.searchParams.get('category')).toBe('goal');
    expect(seen[0].url.searchParams.get('limit')).toBe('2');
    const next = await page.getNextPage();
    expect(next.data.map((m) => m.id)).toEqual(['mem_2', 'mem_3']);
  });

  test('for await over list() yields every entry across pages, with the same filters on each page', async () => {
    const { fetch, seen } = pagedApi(5, 2);
    const ids: string[] = [];
    for await (const memory of amyWith(fetch).memory.list({ category: 'goal', limit: 2 })) ids.push(memory.id);
    expect(ids).toEqual(['mem_0', 'mem_1', 'mem_2', 'mem_3', 'mem_4']);
    expect(seen.map((r) => r.url.searchParams.get('cursor'))).toEqual([null, '2', '4']);
    expect(seen.every((r) => r.url.searchParams.get('category') === 'goal')).toBe(true);
  });

  test('a body that is not JSON is an AmyError naming the request id', async () => {
    const { fetch } = scripted([new Response('<html>', { status: 200, headers: { 'x-request-id': 'req_9' } })]);
    const error = await amyWith(fetch)
      .memory.list()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(AmyError);
    expect((error as Error).message).toContain('req_9');
  });
});

describe('data connections', () => {
  const connection = {
    terra_user_id: 'terra_u1',
    provider: 'OURA',
    status: 'reauth_required',
    scopes: ['sleep', 'daily'],
    connected_at: '2026-11-20T08:00:00.000Z',
    updated_at: '2026-11-23T10:00:00.000Z',
  } as const;

  test('list() reads GET /v1/data/connections and resolves to its data, typed', async () => {
    const { fetch, seen } = scripted([json({ data: [connection] })]);
    const connections: TerraConnection[] = await amyWith(fetch).data.connections.list();
    expect(connections).toEqual([connection]);
    expect(seen.map((r) => [r.method, r.url.pathname, r.url.search])).toEqual([['GET', '/v1/data/connections', '']]);
    expect(seen[0].headers.get('authorization')).toBe('Bearer amy_k');
    const status: TerraConnectionStatus = connections[0].status;
    expect(status).toBe('reauth_required');
  });

  test('none is an empty array; a read is retried after a 503', async () => {
    const { fetch, seen } = scripted([
      envelope('service_unavailable', 503, { 'retry-after': '0' }),
      json({ data: [] }),
    ]);
    expect(await amyWith(fetch).data.connections.list()).toEqual([]);
    expect(seen).toHaveLength(2);
  });
});
