/**
 * The Turns API contract (docs/api.md) over real HTTP, a real worker and a real Temporal server.
 * Every response is checked against the zod schema the API publishes in /openapi.json.
 */
import { newId } from '../../platform/ids';
import { MAX_CREATE_TURN_BODY_BYTES, MAX_MESSAGE_CHARS } from '../../contracts/conversation-limits';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { turnListSchema, turnSchema, type TurnList, type TurnStatus } from '../../contracts/turn';
import { healthSchema } from '../../api/route-table';
import { api, expectSchema, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let alice: { userId: string; apiKey: string };
let bob: { userId: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.createUser('alice');
  bob = await svc.createUser('bob');
});
afterAll(async () => {
  await svc?.close();
});

const turnCount = () => svc.database.db.turn.count();

function expectError(res: { status: number; headers: Headers; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  const { error } = expectSchema(errorEnvelopeSchema, res.body);
  expect(error.code).toBe(code);
  expect(error.request_id).toBe(res.headers.get('x-request-id'));
  expect(error.docs_url).toContain(code);
  return error;
}

describe('POST /v1/turns', () => {
  test('returns the queued turn at once', async () => {
    const res = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: thanks });
    expect(res.status).toBe(201);
    const turn = expectSchema(turnSchema, res.body);
    expect(turn.id).toMatch(/^turn_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(turn.status).toBe('queued');
    expect(turn.result).toBeNull();
    expect(turn.error).toBeNull();
    expect(turn.messages).toEqual(thanks.messages);
    expect(turn.last_event_id).toBe(0);
    // The turn id is the workflow id.
    const description = await svc.temporal.workflow.getHandle(turn.id).describe();
    expect(description.workflowId).toBe(turn.id);
    await svc.temporal.workflow.getHandle(turn.id).result();
  });

  test('"stream": false blocks until the fallback turn completes and returns it whole', async () => {
    const res = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: { ...thanks, stream: false } });
    expect(res.status).toBe(200);
    const turn = expectSchema(turnSchema, res.body);
    expect(turn.status).toBe('completed');
    expect(turn.error).toBeNull();
    expect(turn.completed_at).not.toBeNull();
    const result = turn.result!;
    expect(result.answer.length).toBeGreaterThan(0);
    expect(result.agents_used).toEqual([]);
    expect(result.fact_sheet).toEqual([]);
    expect(result.validator).toEqual({
      findings_total: 0,
      findings_validated: 0,
      findings_conditional: 0,
      findings_rejected: 0,
    });
    // Three model calls (vagueness, routing, reply), each billed in the ledger.
    const calls = await svc.database.db.llmCall.findMany({ where: { turnId: turn.id } });
    expect(calls.map((c) => c.step).sort()).toEqual(['classify_vagueness', 'fallback_reply', 'memory', 'route']);
    const ledgerTotal = calls.reduce((sum, c) => sum + Number(c.costUsd), 0);
    expect(result.cost_usd).toBeGreaterThan(0);
    expect(result.cost_usd).toBeCloseTo(ledgerTotal, 6);
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);

    const again = await api(svc.url, 'GET', `/v1/turns/${turn.id}`, { key: alice.apiKey });
    expect(again.status).toBe(200);
    expect(expectSchema(turnSchema, again.body)).toEqual(turn);
  });

  test("once the turn has ended, last_event_id is the id of its log's last event: the terminal one", async () => {
    const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: { ...thanks, stream: false } });
    const turn = expectSchema(
      turnSchema,
      (await api(svc.url, 'GET', `/v1/turns/${created.body.id}`, { key: alice.apiKey })).body,
    );
    const log = await svc.database.db.turnEvent.findMany({ where: { turnId: turn.id }, orderBy: { id: 'asc' } });
    expect(log.length).toBeGreaterThan(1);
    expect(turn.last_event_id).toBe(log[log.length - 1].id);
    expect(log[log.length - 1].type).toBe('turn.completed');
    expect(expectSchema(turnSchema, created.body).last_event_id).toBe(turn.last_event_id);
  });

  test('a vague question goes to the Investigator, which answers even for a user with no data', async () => {
    const res = await api(svc.url, 'POST', '/v1/turns', {
      key: alice.apiKey,
      body: { messages: [{ role: 'user', content: 'Is anything interesting in my data?' }], stream: false },
    });
    const turn = expectSchema(turnSchema, res.body);
    expect(turn.status).toBe('completed');
    expect(turn.result!.agents_used).toEqual(['investigator']);
  });

  describe('bad input gets the error envelope and creates no turn', () => {
    const cases: Array<[string, unknown, string, string | undefined]> = [
      [
        'last message from the assistant',
        {
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
          ],
        },
        'invalid_request',
        'messages',
      ],
      ['no messages field', {}, 'invalid_field', 'messages'],
      ['empty messages', { messages: [] }, 'invalid_field', 'messages'],
      [
        'a role that does not exist',
        { messages: [{ role: 'system', content: 'x' }] },
        'invalid_field',
        'messages[0].role',
      ],
      ['empty content', { messages: [{ role: 'user', content: '' }] }, 'invalid_field', 'messages[0].content'],
      [
        'a NUL character in content (Postgres cannot store it)',
        { messages: [{ role: 'user', content: 'how did I sleep\u0000?' }] },
        'invalid_field',
        'messages[0].content',
      ],
      ['stream not a boolean', { ...thanks, stream: 'yes' }, 'invalid_field', 'stream'],
      [
        'include_memory not a boolean',
        { ...thanks, context: { include_memory: 1 } },
        'invalid_field',
        'context.include_memory',
      ],
      ['an unknown field', { ...thanks, temperature: 2 }, 'invalid_field', 'temperature'],
      ['a body that is not an object', [1, 2], 'invalid_field', undefined],
    ];
    test.each(cases)('%s', async (_name, body, code, field) => {
      const before = await turnCount();
      const res = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body });
      const error = expectError(res, 400, code);
      if (field) expect(error.field).toBe(field);
      expect(await turnCount()).toBe(before);
    });

    test('a lone surrogate in content (it has no UTF-8 form)', async () => {
      const before = await turnCount();
      const rawBody = '{"messages":[{"role":"user","content":"how did I sleep \\ud800?"}]}';
      const error = expectError(
        await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, rawBody }),
        400,
        'invalid_field',
      );
      expect(error.field).toBe('messages[0].content');
      expect(await turnCount()).toBe(before);
    });

    test('malformed JSON', async () => {
      const before = await turnCount();
      const res = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, rawBody: '{"messages": [' });
      expectError(res, 400, 'invalid_json');
      expect(await turnCount()).toBe(before);
    });

    test('a message over 20,000 characters, in a body far below the body limit', async () => {
      const before = await turnCount();
      const long = { messages: [{ role: 'user', content: 'x'.repeat(MAX_MESSAGE_CHARS + 1) }] };
      const error = expectError(
        await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: long }),
        400,
        'invalid_field',
      );
      expect(error.field).toBe('messages[0].content');
      expect(await turnCount()).toBe(before);
    });

    test('a body over the limit the message limits set, refused before it is parsed', async () => {
      const before = await turnCount();
      const huge = { messages: [{ role: 'user', content: 'x'.repeat(MAX_CREATE_TURN_BODY_BYTES) }] };
      expectError(await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: huge }), 413, 'payload_too_large');
      expect(await turnCount()).toBe(before);
    });

    test('a body that is not JSON', async () => {
      const res = await api(svc.url, 'POST', '/v1/turns', {
        key: alice.apiKey,
        rawBody: 'hello',
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type');
    });
  });
});

describe('authentication and isolation', () => {
  test('a missing key is 401 authentication_required', async () => {
    expectError(await api(svc.url, 'POST', '/v1/turns', { body: thanks }), 401, 'authentication_required');
  });

  test('an unknown key is 401 invalid_api_key', async () => {
    expectError(
      await api(svc.url, 'GET', '/v1/turns/turn_01HX0000000000000000000000', { key: 'amy_live_nope' }),
      401,
      'invalid_api_key',
    );
  });

  test('another user cannot see a turn: 404 for the turn and its events', async () => {
    const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: { ...thanks, stream: false } });
    const id = created.body.id as string;
    expectError(await api(svc.url, 'GET', `/v1/turns/${id}`, { key: bob.apiKey }), 404, 'not_found');
    expectError(await api(svc.url, 'GET', `/v1/turns/${id}/events`, { key: bob.apiKey }), 404, 'not_found');
    const sse = await fetch(`${svc.url}/v1/turns/${id}/events`, {
      headers: { authorization: `Bearer ${bob.apiKey}`, accept: 'text/event-stream' },
    });
    expect(sse.status).toBe(404);
    expect((await api(svc.url, 'GET', `/v1/turns/${id}`, { key: alice.apiKey })).status).toBe(200);
  });

  test('?api_key= authenticates on the event stream route only (for browser EventSource); elsewhere it is refused, with or without the header', async () => {
    const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: { ...thanks, stream: false } });
    const events = await api(svc.url, 'GET', `/v1/turns/${created.body.id}/events?api_key=${alice.apiKey}`);
    expect(events.status).toBe(200);
    expect(events.body.id).toBe(created.body.id);
    for (const [method, path, key] of [
      ['GET', `/v1/turns/${created.body.id}?api_key=${alice.apiKey}`, undefined],
      ['GET', `/v1/turns/${created.body.id}?api_key=${alice.apiKey}`, alice.apiKey],
      ['POST', `/v1/turns?api_key=${alice.apiKey}`, undefined],
      ['POST', `/v1/turns/${created.body.id}/cancel?api_key=${alice.apiKey}`, undefined],
      ['DELETE', `/v1/memory/mem_01ARZ3NDEKTSV4RRFFQ69G5FAV?api_key=${alice.apiKey}`, alice.apiKey],
    ] as const) {
      const res = await api(svc.url, method, path, { key, body: method === 'POST' ? thanks : undefined });
      const error = expectError(res, 401, 'authentication_required');
      expect(error.message).toContain('Authorization: Bearer');
    }
  });

  test('a malformed turn id is simply not found', async () => {
    expectError(await api(svc.url, 'GET', '/v1/turns/not-a-turn', { key: alice.apiKey }), 404, 'not_found');
  });
});

describe('GET /v1/turns', () => {
  /** A turn row as the worker leaves it, at a chosen created_at (a UTC wall time, millisecond precision). */
  async function insertTurn(userId: string, createdAt: string, status: TurnStatus = 'completed'): Promise<string> {
    const id = newId('turn');
    const messages = JSON.stringify([{ role: 'user', content: `asked at ${createdAt}` }]);
    const error =
      status === 'failed'
        ? JSON.stringify({ code: 'cancelled', message: 'Cancelled.', request_id: 'req_x', docs_url: 'https://d/#c' })
        : null;
    await svc.database.db.$executeRaw`
      INSERT INTO turns (id, user_id, status, messages, context, error, created_at)
      VALUES (${id}, ${userId}, ${status}::"TurnStatus", ${messages}::jsonb, '{}'::jsonb, ${error}::jsonb,
              ${createdAt}::timestamp AT TIME ZONE 'UTC')`;
    return id;
  }

  async function listTurns(key: string, query = ''): Promise<TurnList> {
    const res = await api(svc.url, 'GET', `/v1/turns${query}`, { key });
    expect(res.status).toBe(200);
    return expectSchema(turnListSchema, res.body);
  }

  /** Every page of a list, following next_cursor; the pages' sizes too. */
  async function allPages(key: string, query: string) {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const page: TurnList = await listTurns(key, `${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.has_more).toBe(page.next_cursor !== null);
      ids.push(...page.data.map((t) => t.id));
      sizes.push(page.data.length);
      cursor = page.next_cursor;
    } while (cursor && sizes.length < 20);
    return { ids, sizes };
  }

  const newestFirst = (turns: Array<{ id: string; createdAt: string }>) =>
    [...turns]
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0))
      .map((t) => t.id);

  test('the caller’s turns, newest first, each the Turn that GET /v1/turns/:id returns (without progress)', async () => {
    const gina = await svc.createUser('gina');
    const first = await api(svc.url, 'POST', '/v1/turns', { key: gina.apiKey, body: { ...thanks, stream: false } });
    const second = await api(svc.url, 'POST', '/v1/turns', { key: gina.apiKey, body: { ...thanks, stream: false } });
    const page = await listTurns(gina.apiKey);
    expect(page.data.map((t) => t.id)).toEqual([second.body.id, first.body.id]);
    expect(page).toMatchObject({ has_more: false, next_cursor: null });
    for (const listed of page.data) {
      expect(listed).not.toHaveProperty('progress');
      expect(listed).toEqual((await api(svc.url, 'GET', `/v1/turns/${listed.id}`, { key: gina.apiKey })).body);
      expect(listed.status).toBe('completed');
      expect(listed.result!.answer.length).toBeGreaterThan(0);
    }
  });

  test('a running turn is listed as it stands, without progress', async () => {
    const hana = await svc.createUser('hana');
    await svc.scripted.faults.inject({ kind: 'slow', step: 'classify_vagueness', times: 1, delay_ms: 1500 });
    const created = await api(svc.url, 'POST', '/v1/turns', { key: hana.apiKey, body: thanks });
    const [listed] = (await listTurns(hana.apiKey)).data;
    expect(listed.id).toBe(created.body.id);
    expect(['queued', 'running']).toContain(listed.status);
    expect(listed).not.toHaveProperty('progress');
    expect(listed.result).toBeNull();
    await svc.temporal.workflow.getHandle(listed.id).result();
  });

  describe('pages', () => {
    let ivan: { userId: string; apiKey: string };
    const stored: Array<{ id: string; createdAt: string; status: TurnStatus }> = [];

    beforeAll(async () => {
      ivan = await svc.createUser('ivan');
      const add = async (createdAt: string, status: TurnStatus = 'completed') =>
        stored.push({ id: await insertTurn(ivan.userId, createdAt, status), createdAt, status });
      await add('2026-05-01T10:00:00.000', 'failed');
      // Three turns in the same millisecond: only the id orders them, across a page boundary.
      for (let i = 0; i < 3; i++) await add('2026-05-02T10:00:00.123', i === 1 ? 'failed' : 'completed');
      await add('2026-05-03T10:00:00.000');
      await add('2026-05-02T12:00:00.000', 'failed');
      await add('2026-04-30T23:59:59.999');
    });

    test('limit=2 pages cover every turn exactly once, in order', async () => {
      const { ids, sizes } = await allPages(ivan.apiKey, '?limit=2');
      expect(sizes).toEqual([2, 2, 2, 1]);
      expect(ids).toEqual(newestFirst(stored));
      expect((await listTurns(ivan.apiKey, '?limit=100')).data.map((t) => t.id)).toEqual(newestFirst(stored));
    });

    test('the last full page says there is nothing more', async () => {
      const firstSix = await listTurns(ivan.apiKey, '?limit=6');
      expect(firstSix.has_more).toBe(true);
      const rest = await listTurns(ivan.apiKey, `?limit=6&cursor=${firstSix.next_cursor}`);
      expect(rest.data.map((t) => t.id)).toEqual([newestFirst(stored)[6]]);
      expect(rest).toMatchObject({ has_more: false, next_cursor: null });
    });

    test('status filters, and pages keep honouring it', async () => {
      const failed = newestFirst(stored.filter((t) => t.status === 'failed'));
      expect(failed).toHaveLength(3);
      const { ids, sizes } = await allPages(ivan.apiKey, '?status=failed&limit=1');
      expect(sizes).toEqual([1, 1, 1]);
      expect(ids).toEqual(failed);
      const page = await listTurns(ivan.apiKey, '?status=failed');
      expect(page.data.every((t) => t.status === 'failed' && t.error?.code === 'cancelled')).toBe(true);
      expect((await listTurns(ivan.apiKey, '?status=running')).data).toEqual([]);
    });

    test('the default page size is 20', async () => {
      const jack = await svc.createUser('jack');
      for (let i = 0; i < 21; i++) await insertTurn(jack.userId, `2026-06-01T00:00:${String(i).padStart(2, '0')}.000`);
      const page = await listTurns(jack.apiKey);
      expect(page.data).toHaveLength(20);
      expect(page.has_more).toBe(true);
      expect(page.data[0].messages[0].content).toBe('asked at 2026-06-01T00:00:20.000');
    });

    test('another user’s turns never appear, on any page', async () => {
      const mine = new Set((await allPages(alice.apiKey, '?limit=3')).ids);
      expect(stored.some((t) => mine.has(t.id))).toBe(false);
      const kim = await svc.createUser('kim');
      expect(await listTurns(kim.apiKey)).toEqual({ data: [], next_cursor: null, has_more: false });
      // A cursor from someone else's list only positions the caller's own list: Ivan's older turns stay his.
      const kims = await insertTurn(kim.userId, '2026-04-01T00:00:00.000');
      const ivansFirst = await listTurns(ivan.apiKey, '?limit=1');
      const after = await listTurns(kim.apiKey, `?cursor=${ivansFirst.next_cursor}`);
      expect(after.data.map((t) => t.id)).toEqual([kims]);
    });

    test('a filter in the query comes with the key in the header', async () => {
      const res = await api(svc.url, 'GET', '/v1/turns?status=completed&limit=100', { key: ivan.apiKey });
      expect(res.status).toBe(200);
      expect(expectSchema(turnListSchema, res.body).data.map((t) => t.id)).toEqual(
        newestFirst(stored.filter((t) => t.status === 'completed')),
      );
    });
  });

  const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const badQueries: Array<[string, string, string]> = [
    ['limit=0', '?limit=0', 'limit'],
    ['limit=101', '?limit=101', 'limit'],
    ['limit=abc', '?limit=abc', 'limit'],
    ['limit=1.5', '?limit=1.5', 'limit'],
    ['an empty limit', '?limit=', 'limit'],
    ['a status that does not exist', '?status=done', 'status'],
    ['a cursor that is not base64 JSON', '?cursor=not-a-cursor', 'cursor'],
    ['an empty cursor', '?cursor=', 'cursor'],
    ['a memory list’s cursor', `?cursor=${cursorOf(['2026-01-01T00:00:00.000Z', newId('memory')])}`, 'cursor'],
    ['a cursor at no real instant', `?cursor=${cursorOf(['2026-02-30T10:00:00.000', newId('turn')])}`, 'cursor'],
    ['an unknown parameter', '?sort=asc', 'sort'],
  ];
  test.each(badQueries)('%s is 400 invalid_field', async (_name, query, field) => {
    const error = expectError(
      await api(svc.url, 'GET', `/v1/turns${query}`, { key: alice.apiKey }),
      400,
      'invalid_field',
    );
    expect(error.field).toBe(field);
  });

  test('no key is 401, a wrong key 401 invalid_api_key', async () => {
    expectError(await api(svc.url, 'GET', '/v1/turns'), 401, 'authentication_required');
    expectError(await api(svc.url, 'GET', '/v1/turns', { key: 'amy_live_nope' }), 401, 'invalid_api_key');
  });

  test('/openapi.json describes it from its contract', async () => {
    const list = (await api(svc.url, 'GET', '/openapi.json')).body.paths['/v1/turns'].get;
    expect(list.operationId).toBe('listTurns');
    const params = Object.fromEntries(list.parameters.map((p: { name: string }) => [p.name, p]));
    expect(Object.keys(params).sort()).toEqual(['cursor', 'limit', 'status']);
    expect(params.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(params.status.schema.enum).toEqual(['queued', 'running', 'completed', 'failed']);
    const page = list.responses['200'].content['application/json'].schema;
    expect(Object.keys(page.properties).sort()).toEqual(['data', 'has_more', 'next_cursor']);
    expect(page.properties.data.items.properties).not.toHaveProperty('progress');
    expect(page.properties.data.items.properties).toHaveProperty('last_event_id');
    expect(list.responses['400']).toBeDefined();
  });
});

describe('concurrency cap', () => {
  test('10 simultaneous POSTs give exactly 3 turns and 7 × 429 concurrency_limit_exceeded', async () => {
    const carol = await svc.createUser('carol');
    // Keep the admitted turns in flight while the others race for a slot.
    await svc.scripted.faults.inject({ kind: 'slow', step: 'classify_vagueness', times: 3, delay_ms: 1500 });
    const before = await turnCount();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => api(svc.url, 'POST', '/v1/turns', { key: carol.apiKey, body: thanks })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
    for (const r of responses.filter((r) => r.status === 429)) expectError(r, 429, 'concurrency_limit_exceeded');
    expect(await turnCount()).toBe(before + 3);
    for (const r of responses.filter((r) => r.status === 201)) {
      await svc.temporal.workflow.getHandle(r.body.id).result();
    }
    // Slots free up once turns end.
    expect((await api(svc.url, 'POST', '/v1/turns', { key: carol.apiKey, body: thanks })).status).toBe(201);
  });
});

describe('service endpoints', () => {
  test('GET /healthz reports Postgres and Temporal reachability', async () => {
    const res = await api(svc.url, 'GET', '/healthz');
    expect(res.status).toBe(200);
    const health = expectSchema(healthSchema, res.body);
    expect(health.postgres.ok).toBe(true);
    expect(health.temporal.ok).toBe(true);
  });

  test('GET /openapi.json describes the routes with the request schema', async () => {
    const res = await api(svc.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const create = res.body.paths['/v1/turns'].post;
    const schema = create.requestBody.content['application/json'].schema;
    expect(schema.required).toContain('messages');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/v1/turns', '/v1/turns/{id}', '/v1/turns/{id}/events', '/healthz']),
    );
  });

  test('unknown routes are 404 in the envelope', async () => {
    expectError(await api(svc.url, 'GET', '/v1/nothing', { key: alice.apiKey }), 404, 'not_found');
  });
});
