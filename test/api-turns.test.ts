/**
 * The Turns API contract (seed 000) over real HTTP, a real worker and a real Temporal server.
 * Every response is checked against the zod schema the API publishes in /openapi.json.
 */
import { errorEnvelopeSchema } from '../contracts/errors';
import { turnSchema } from '../contracts/turn';
import { healthSchema } from '../api/contract';
import { api, expectSchema, thanks } from './support/http';
import { startTestService, type TestService } from './support/service';

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
    expect(calls.map((c) => c.step).sort()).toEqual([
      'classify_vagueness',
      'fallback_reply',
      'memory_extract',
      'route',
    ]);
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

    test('malformed JSON', async () => {
      const before = await turnCount();
      const res = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, rawBody: '{"messages": [' });
      expectError(res, 400, 'invalid_json');
      expect(await turnCount()).toBe(before);
    });

    test('an oversized body', async () => {
      const before = await turnCount();
      const huge = { messages: [{ role: 'user', content: 'x'.repeat(300 * 1024) }] };
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

  test('?api_key= authenticates like the bearer header (for browser EventSource)', async () => {
    const created = await api(svc.url, 'POST', '/v1/turns', { key: alice.apiKey, body: { ...thanks, stream: false } });
    const res = await api(svc.url, 'GET', `/v1/turns/${created.body.id}?api_key=${alice.apiKey}`);
    expect(res.status).toBe(200);
  });

  test('a malformed turn id is simply not found', async () => {
    expectError(await api(svc.url, 'GET', '/v1/turns/not-a-turn', { key: alice.apiKey }), 404, 'not_found');
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
