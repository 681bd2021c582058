/**
 * The Memory API contract (docs/design.md#memory) over real HTTP against a real database. Every response is
 * checked against the zod schema the API publishes in /openapi.json.
 */
import { newId } from '../../platform/ids';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { memoryListSchema, memorySchema, testedHypothesisMetaSchema, type Memory } from '../../contracts/memory';
import { Amy, BadRequestError } from '@amy/sdk';
import { api, expectSchema } from '../support/http';
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

const entryCount = (userId: string) => svc.database.db.memoryEntry.count({ where: { userId } });

function expectError(res: { status: number; headers: Headers; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  const { error } = expectSchema(errorEnvelopeSchema, res.body);
  expect(error.code).toBe(code);
  expect(error.request_id).toBe(res.headers.get('x-request-id'));
  expect(error.docs_url).toContain(code);
  return error;
}

interface StoredEntry {
  category: string;
  text: string;
  createdAt: string;
  meta?: Record<string, unknown> | null;
  sourceTurnId?: string | null;
}

/** Writes an entry straight into the table, as the worker would, at a chosen instant. */
async function insertEntry(userId: string, entry: StoredEntry): Promise<string> {
  const id = newId('memory');
  const meta = entry.meta ? JSON.stringify(entry.meta) : null;
  await svc.database.db.$executeRaw`
    INSERT INTO memory_entries (id, user_id, category, text, confidence, source_turn_id, meta, created_at)
    VALUES (${id}, ${userId}, ${entry.category}, ${entry.text}, 0.9, ${entry.sourceTurnId ?? null}, ${meta}::jsonb,
            ${entry.createdAt}::timestamptz)`;
  return id;
}

async function list(key: string, query = '') {
  const res = await api(svc.url, 'GET', `/v1/memory${query}`, { key });
  expect(res.status).toBe(200);
  return expectSchema(memoryListSchema, res.body);
}

const ids = (page: { data: Memory[] }) => page.data.map((m) => m.id);

describe('POST /v1/memory', () => {
  test('writes a user entry: 201, source_turn_id null, confidence 1.0 by default', async () => {
    const before = Date.now();
    const res = await api(svc.url, 'POST', '/v1/memory', {
      key: alice.apiKey,
      body: { text: 'Vegetarian. No fish.', category: 'preference' },
    });
    expect(res.status).toBe(201);
    const memory = expectSchema(memorySchema, res.body);
    expect(memory).toEqual({
      id: expect.stringMatching(/^mem_[0-9A-HJKMNP-TV-Z]{26}$/),
      text: 'Vegetarian. No fish.',
      category: 'preference',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      source_turn_id: null,
      confidence: 1,
      meta: null,
    });
    const createdAt = Date.parse(memory.created_at);
    expect(createdAt).toBeGreaterThanOrEqual(before - 1000);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 1000);

    const row = await svc.database.db.memoryEntry.findUniqueOrThrow({ where: { id: memory.id } });
    expect(row).toMatchObject({ userId: alice.userId, sourceTurnId: null, confidence: 1, meta: null });
    expect(row.createdAt.toISOString()).toBe(memory.created_at);
    expect((await list(alice.apiKey)).data).toContainEqual(memory);
  });

  test('keeps a given confidence and meta, and trims the text', async () => {
    const res = await api(svc.url, 'POST', '/v1/memory', {
      key: alice.apiKey,
      body: {
        text: '  Marathon runner for 8 years.  ',
        category: 'history',
        confidence: 0.35,
        meta: { source: 'onboarding' },
      },
    });
    expect(res.status).toBe(201);
    const memory = expectSchema(memorySchema, res.body);
    expect(memory).toMatchObject({
      text: 'Marathon runner for 8 years.',
      category: 'history',
      confidence: 0.35,
      meta: { source: 'onboarding' },
    });
  });

  test('text of exactly 500 characters is accepted', async () => {
    const res = await api(svc.url, 'POST', '/v1/memory', {
      key: alice.apiKey,
      body: { text: 'x'.repeat(500), category: 'goal' },
    });
    expect(res.status).toBe(201);
    expect(expectSchema(memorySchema, res.body).text).toHaveLength(500);
  });

  describe('bad input gets 400 in the envelope and writes nothing', () => {
    const ok = { text: 'Mornings only for workouts.', category: 'preference' };
    const cases: Array<[string, unknown, string | undefined]> = [
      ['no category', { text: ok.text }, 'category'],
      ['a null category', { ...ok, category: null }, 'category'],
      ['an unknown category', { ...ok, category: 'mood' }, 'category'],
      ['the internal tested_hypothesis category', { ...ok, category: 'tested_hypothesis' }, 'category'],
      ['no text', { category: 'goal' }, 'text'],
      ['empty text', { ...ok, text: '' }, 'text'],
      ['whitespace-only text', { ...ok, text: '   ' }, 'text'],
      ['text over 500 characters', { ...ok, text: 'x'.repeat(501) }, 'text'],
      ['text not a string', { ...ok, text: 42 }, 'text'],
      ['confidence above 1', { ...ok, confidence: 1.5 }, 'confidence'],
      ['confidence below 0', { ...ok, confidence: -0.1 }, 'confidence'],
      ['confidence as a string', { ...ok, confidence: '0.5' }, 'confidence'],
      ['meta not an object', { ...ok, meta: 'x' }, 'meta'],
      ['an unknown field', { ...ok, source_turn_id: 'turn_01HX0000000000000000000000' }, 'source_turn_id'],
      ['a body that is not an object', [ok], undefined],
    ];
    test.each(cases)('%s', async (_name, body, field) => {
      const before = await entryCount(alice.userId);
      const res = await api(svc.url, 'POST', '/v1/memory', { key: alice.apiKey, body });
      const error = expectError(res, 400, 'invalid_field');
      if (field) expect(error.field).toBe(field);
      expect(await entryCount(alice.userId)).toBe(before);
    });

    test('malformed JSON is 400 invalid_json', async () => {
      const before = await entryCount(alice.userId);
      const res = await api(svc.url, 'POST', '/v1/memory', { key: alice.apiKey, rawBody: '{"text": "a", ' });
      expectError(res, 400, 'invalid_json');
      expect(await entryCount(alice.userId)).toBe(before);
    });

    test('a body that is not JSON at all is 415', async () => {
      const before = await entryCount(alice.userId);
      const res = await api(svc.url, 'POST', '/v1/memory', {
        key: alice.apiKey,
        rawBody: 'Vegetarian. No fish.',
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type');
      expect(await entryCount(alice.userId)).toBe(before);
    });
  });
});

describe('POST /v1/memory never remembers a credential: 400 secret_detected, the secret nowhere in the answer', () => {
  // One of each kind, as a user pastes it; the vendors' documented formats and test card numbers, none live.
  const SECRETS: Array<[string, { text: string; meta?: Record<string, unknown> }, string, string]> = [
    [
      'an Anthropic key',
      { text: 'Claude key: sk-ant-api03-Xk9Qm2Lp7Rt1Vw8Yz3Bc6Dn0Gh5Jk2Mn4Pq7St9Vx1Za3Cd6Ef8Gh-AA' },
      'text',
      'sk-ant-api03-Xk9Qm2Lp7Rt1Vw8Yz3Bc6Dn0Gh5Jk2Mn4Pq7St9Vx1Za3Cd6Ef8Gh-AA',
    ],
    [
      'an AWS access key',
      { text: 'AWS key AKIAIOSFODNN7EXAMPLE for the export bucket' },
      'text',
      'AKIAIOSFODNN7EXAMPLE',
    ],
    [
      'a GitHub token',
      { text: 'GitHub: ghp_16C7e42F292c6912E7710c838347Ae178B4a' },
      'text',
      'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
    ],
    [
      'a Slack token',
      { text: 'Post to xoxb-2048157213-4096318426153-Kq7Rt1Vw8Yz3Bc6Dn0Gh5Jk2' },
      'text',
      'xoxb-2048157213-4096318426153-Kq7Rt1Vw8Yz3Bc6Dn0Gh5Jk2',
    ],
    [
      'an Amy key',
      { text: 'My key amy_live_7Hc2Kq9Xw4Lm8Rt1Vb6Nz3Pd5Fg0Js2A' },
      'text',
      'amy_live_7Hc2Kq9Xw4Lm8Rt1Vb6Nz3Pd5Fg0Js2A',
    ],
    [
      'a JWT',
      {
        text: 'Withings token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      },
      'text',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTQyIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    ],
    ['a bearer token', { text: 'Authorization: Bearer Qm9yZWQ7TmV2ZXI6R2l2ZVVw' }, 'text', 'Qm9yZWQ7TmV2ZXI6R2l2ZVVw'],
    ['a password', { text: 'My Garmin password is Tr0ub4dor&3' }, 'text', 'Tr0ub4dor&3'],
    ['a card number', { text: 'Gym membership card 5555-5555-5555-4444' }, 'text', '5555-5555-5555-4444'],
    [
      'a long hex secret',
      { text: 'Webhook secret 5f4dcc3b5aa765d61d8327deb882cf99a1b2c3d4' },
      'text',
      '5f4dcc3b5aa765d61d8327deb882cf99a1b2c3d4',
    ],
    [
      'a password in meta',
      { text: 'Marathon runner for 8 years.', meta: { password: 'hunter22' } },
      'meta',
      'hunter22',
    ],
  ];
  const amy = () => new Amy({ apiKey: alice.apiKey, baseUrl: svc.url, maxRetries: 0 });

  test.each(SECRETS)('%s', async (_name, entry, field, secret) => {
    const before = await entryCount(alice.userId);
    const res = await api(svc.url, 'POST', '/v1/memory', {
      key: alice.apiKey,
      body: { category: 'history', ...entry },
    });
    const error = expectError(res, 400, 'secret_detected');
    expect(error.field).toBe(field);
    expect(error.message).toMatch(/looks like (an?) /);
    expect(JSON.stringify(res.body)).not.toContain(secret);
    expect(await entryCount(alice.userId)).toBe(before);
  });

  test('the SDK throws a BadRequestError with the code and the field', async () => {
    const error = await amy()
      .memory.create({ category: 'history', text: 'My Garmin password is Tr0ub4dor&3' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'secret_detected', field: 'text' });
    expect((error as Error).message).not.toContain('Tr0ub4dor&3');
  });

  test.each([
    'Walked 10,000 steps a day in March; steps last week 8432, 10213, 9876.',
    'LDL 3.4 mmol/L on 2026-03-04, HbA1c 5.6%, resting heart rate 52 bpm.',
    'Dr. Smith: +1 415 555 0132 or (415) 555-0199; insurance member ID 123456789.',
    'Follows the Zone2-cardio-3x-per-week-45min plan; the surgeon put a pin in my left ankle in 2019.',
  ])('health text is remembered: %s', async (text) => {
    const res = await api(svc.url, 'POST', '/v1/memory', { key: alice.apiKey, body: { category: 'history', text } });
    expect(res.status).toBe(201);
    expect(expectSchema(memorySchema, res.body).text).toBe(text);
  });
});

describe('GET /v1/memory filters', () => {
  let carol: { userId: string; apiKey: string };
  const at: Record<string, string> = {};
  const thMeta = {
    finding_id: 'ds-001',
    feature: 'caffeine_after_2pm',
    target: 'deep_sleep',
    verdict: 'rejected',
    effect: 0.04,
  };

  beforeAll(async () => {
    carol = await svc.createUser('carol');
    at.goal = await insertEntry(carol.userId, {
      category: 'goal',
      text: 'Lift deep sleep.',
      createdAt: '2026-01-01T00:00:00Z',
    });
    at.insight = await insertEntry(carol.userId, {
      category: 'insight',
      text: 'Recovery follows sleep consistency.',
      createdAt: '2026-02-01T00:00:00Z',
    });
    at.preference = await insertEntry(carol.userId, {
      category: 'preference',
      text: 'Vegetarian.',
      createdAt: '2026-03-01T00:00:00Z',
    });
    at.tested = await insertEntry(carol.userId, {
      category: 'tested_hypothesis',
      text: 'Caffeine after 2pm hurts deep sleep.',
      createdAt: '2026-03-15T00:00:00Z',
      sourceTurnId: 'turn_01HX0000000000000000000000',
      meta: thMeta,
    });
    at.history = await insertEntry(carol.userId, {
      category: 'history',
      text: 'Marathon runner.',
      createdAt: '2026-04-01T00:00:00Z',
    });
  });

  test('by default: newest first, tested_hypothesis left out, one page', async () => {
    const page = await list(carol.apiKey);
    expect(ids(page)).toEqual([at.history, at.preference, at.insight, at.goal]);
    expect(page.has_more).toBe(false);
    expect(page.next_cursor).toBeNull();
    expect(page.data[0]).toEqual({
      id: at.history,
      text: 'Marathon runner.',
      category: 'history',
      created_at: '2026-04-01T00:00:00.000Z',
      source_turn_id: null,
      confidence: 0.9,
      meta: null,
    });
  });

  test('include=tested_hypothesis lists them too, with their meta as stored', async () => {
    const page = await list(carol.apiKey, '?include=tested_hypothesis');
    expect(ids(page)).toEqual([at.history, at.tested, at.preference, at.insight, at.goal]);
    const tested = page.data[1];
    expect(tested.category).toBe('tested_hypothesis');
    expect(tested.source_turn_id).toBe('turn_01HX0000000000000000000000');
    expect(expectSchema(testedHypothesisMetaSchema, tested.meta)).toEqual(thMeta);
  });

  test('category filters to one category; naming tested_hypothesis lists those entries', async () => {
    expect(ids(await list(carol.apiKey, '?category=goal'))).toEqual([at.goal]);
    expect(ids(await list(carol.apiKey, '?category=preference'))).toEqual([at.preference]);
    expect(ids(await list(carol.apiKey, '?category=tested_hypothesis'))).toEqual([at.tested]);
    expect(ids(await list(carol.apiKey, '?category=goal&include=tested_hypothesis'))).toEqual([at.goal]);
  });

  test('after and before are strict bounds on created_at, in any offset', async () => {
    expect(ids(await list(carol.apiKey, '?after=2026-02-01T00:00:00Z'))).toEqual([at.history, at.preference]);
    expect(ids(await list(carol.apiKey, '?before=2026-03-01T00:00:00Z'))).toEqual([at.insight, at.goal]);
    expect(
      ids(
        await list(carol.apiKey, '?after=2026-01-15T00:00:00Z&before=2026-03-20T00:00:00Z&include=tested_hypothesis'),
      ),
    ).toEqual([at.tested, at.preference, at.insight]);
    // 01:00 at +02:00 is 23:00 UTC the day before, so the 2026-02-01T00:00Z insight is after it.
    expect(ids(await list(carol.apiKey, `?after=${encodeURIComponent('2026-02-01T01:00:00+02:00')}`))).toEqual([
      at.history,
      at.preference,
      at.insight,
    ]);
    expect(ids(await list(carol.apiKey, '?after=2026-02-01T00:00:00.001Z&before=2026-02-28T00:00:00Z'))).toEqual([]);
  });

  test('a filter in the query comes with the key in the header (?api_key= is refused here)', async () => {
    expect((await api(svc.url, 'GET', `/v1/memory?api_key=${carol.apiKey}&category=goal`)).status).toBe(401);
    const res = await api(svc.url, 'GET', '/v1/memory?category=goal', { key: carol.apiKey });
    expect(res.status).toBe(200);
    expect(ids(expectSchema(memoryListSchema, res.body))).toEqual([at.goal]);
  });

  const badQueries: Array<[string, string, string]> = [
    ['an unknown category', '?category=mood', 'category'],
    ['a repeated category', '?category=goal&category=insight', 'category'],
    ['include of something else', '?include=goal', 'include'],
    ['after that is not a date', '?after=yesterday', 'after'],
    ['after without Z or an offset', '?after=2026-02-01T00:00:00', 'after'],
    ['before that is no real date', '?before=2026-13-01T00:00:00Z', 'before'],
    ['limit=0', '?limit=0', 'limit'],
    ['limit=101', '?limit=101', 'limit'],
    ['limit=abc', '?limit=abc', 'limit'],
    ['limit=1.5', '?limit=1.5', 'limit'],
    ['an empty limit', '?limit=', 'limit'],
    ['a cursor that is not base64 JSON', '?cursor=not-a-cursor', 'cursor'],
    [
      'a well-formed cursor naming a turn',
      `?cursor=${Buffer.from('["2026-01-01T00:00:00.000Z","turn_01HX0000000000000000000000"]').toString('base64url')}`,
      'cursor',
    ],
    ['an unknown parameter', '?sort=asc', 'sort'],
  ];
  test.each(badQueries)('%s is 400 invalid_field', async (_name, query, field) => {
    const error = expectError(
      await api(svc.url, 'GET', `/v1/memory${query}`, { key: carol.apiKey }),
      400,
      'invalid_field',
    );
    expect(error.field).toBe(field);
  });

  test('limit accepts its bounds, 1 and 100', async () => {
    const one = await list(carol.apiKey, '?limit=1');
    expect(ids(one)).toEqual([at.history]);
    expect(one.has_more).toBe(true);
    expect(ids(await list(carol.apiKey, '?limit=100'))).toHaveLength(4);
  });
});

describe('GET /v1/memory pagination', () => {
  let dave: { userId: string; apiKey: string };
  let expected: string[];

  beforeAll(async () => {
    dave = await svc.createUser('dave');
    const stored: Array<{ id: string; createdAt: string; category: string }> = [];
    const add = async (createdAt: string, category = 'history') =>
      stored.push({
        id: await insertEntry(dave.userId, { category, text: `at ${createdAt}`, createdAt }),
        createdAt,
        category,
      });
    await add('2026-05-01T10:00:00.000Z');
    // Three entries in the same millisecond: only the id orders them, across a page boundary.
    for (let i = 0; i < 3; i++) await add('2026-05-02T10:00:00.123Z');
    await add('2026-05-03T10:00:00.000Z');
    await add('2026-05-02T12:00:00.000Z', 'tested_hypothesis');
    for (const text of ['Sleep by 23:00.', 'No caffeine after noon.']) {
      const res = await api(svc.url, 'POST', '/v1/memory', { key: dave.apiKey, body: { text, category: 'goal' } });
      stored.push({ id: res.body.id, createdAt: res.body.created_at, category: 'goal' });
    }
    expected = stored
      .filter((e) => e.category !== 'tested_hypothesis')
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0))
      .map((e) => e.id);
  });

  test('limit=2 pages cover every entry exactly once, in order', async () => {
    expect(expected).toHaveLength(7);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(dave.apiKey, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      pages++;
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
    } while (cursor && pages < 10);
    expect(pages).toBe(4);
    expect(seen).toEqual(expected);
    expect(ids(await list(dave.apiKey, '?limit=100'))).toEqual(expected);
  });

  test('the last full page says there is nothing more', async () => {
    const firstSix = await list(dave.apiKey, '?limit=6');
    expect(firstSix.has_more).toBe(true);
    const rest = await list(dave.apiKey, `?limit=1&cursor=${firstSix.next_cursor}`);
    expect(ids(rest)).toEqual([expected[6]]);
    expect(rest.has_more).toBe(false);
    expect(rest.next_cursor).toBeNull();
  });

  test('pages keep honouring the filters', async () => {
    const first = await list(dave.apiKey, '?limit=1&include=tested_hypothesis&before=2026-05-03T00:00:00Z');
    expect(first.data[0].category).toBe('tested_hypothesis');
    const second = await list(
      dave.apiKey,
      `?limit=10&include=tested_hypothesis&before=2026-05-03T00:00:00Z&cursor=${first.next_cursor}`,
    );
    expect(ids(second)).toEqual(expected.slice(3));
  });

  test('the default page size is 20', async () => {
    const erin = await svc.createUser('erin');
    for (let i = 0; i < 21; i++) {
      await insertEntry(erin.userId, {
        category: 'goal',
        text: `goal ${i}`,
        createdAt: `2026-06-01T00:00:${String(i).padStart(2, '0')}Z`,
      });
    }
    const page = await list(erin.apiKey);
    expect(page.data).toHaveLength(20);
    expect(page.has_more).toBe(true);
    expect(page.data[0].text).toBe('goal 20');
  });
});

describe('DELETE /v1/memory/:id', () => {
  test('204 and the entry is gone; deleting it again is 404', async () => {
    const created = await api(svc.url, 'POST', '/v1/memory', {
      key: alice.apiKey,
      body: { text: 'Switched to pescatarian.', category: 'preference' },
    });
    const id = created.body.id as string;
    const res = await api(svc.url, 'DELETE', `/v1/memory/${id}`, { key: alice.apiKey });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(await svc.database.db.memoryEntry.findUnique({ where: { id } })).toBeNull();
    expect(ids(await list(alice.apiKey, '?limit=100'))).not.toContain(id);
    expectError(await api(svc.url, 'DELETE', `/v1/memory/${id}`, { key: alice.apiKey }), 404, 'not_found');
  });

  test('a tested_hypothesis entry can be deleted specifically', async () => {
    const id = await insertEntry(alice.userId, {
      category: 'tested_hypothesis',
      text: 'Late workouts drop recovery.',
      createdAt: '2026-05-22T00:00:00Z',
    });
    expect((await api(svc.url, 'DELETE', `/v1/memory/${id}`, { key: alice.apiKey })).status).toBe(204);
    expect(await svc.database.db.memoryEntry.findUnique({ where: { id } })).toBeNull();
  });

  test('an unknown or malformed id is 404', async () => {
    const unknown = newId('memory');
    expectError(await api(svc.url, 'DELETE', `/v1/memory/${unknown}`, { key: alice.apiKey }), 404, 'not_found');
    expectError(await api(svc.url, 'DELETE', '/v1/memory/not-a-memory', { key: alice.apiKey }), 404, 'not_found');
  });
});

describe('authentication and isolation', () => {
  test("another user's entry is 404 to delete, stays, and never shows in their list", async () => {
    const created = await api(svc.url, 'POST', '/v1/memory', {
      key: alice.apiKey,
      body: { text: 'Resting HR was 48 before 2024.', category: 'history' },
    });
    const id = created.body.id as string;
    expectError(await api(svc.url, 'DELETE', `/v1/memory/${id}`, { key: bob.apiKey }), 404, 'not_found');
    expect(await svc.database.db.memoryEntry.findUnique({ where: { id } })).not.toBeNull();

    const bobs = await api(svc.url, 'POST', '/v1/memory', {
      key: bob.apiKey,
      body: { text: 'Cyclist.', category: 'history' },
    });
    const bobList = await list(bob.apiKey, '?limit=100&include=tested_hypothesis');
    expect(ids(bobList)).toEqual([bobs.body.id]);
    expect(ids(await list(alice.apiKey, '?limit=100'))).toContain(id);
    expect(ids(await list(alice.apiKey, '?limit=100'))).not.toContain(bobs.body.id);
  });

  test('no key is 401 on every memory route, and nothing is written', async () => {
    const before = await svc.database.db.memoryEntry.count();
    expectError(await api(svc.url, 'GET', '/v1/memory'), 401, 'authentication_required');
    expectError(
      await api(svc.url, 'POST', '/v1/memory', { body: { text: 'x', category: 'goal' } }),
      401,
      'authentication_required',
    );
    expectError(await api(svc.url, 'DELETE', `/v1/memory/${newId('memory')}`), 401, 'authentication_required');
    expectError(await api(svc.url, 'GET', '/v1/memory', { key: 'amy_live_nope' }), 401, 'invalid_api_key');
    expect(await svc.database.db.memoryEntry.count()).toBe(before);
  });
});

describe('/openapi.json', () => {
  test('lists the three memory operations from their contracts', async () => {
    const res = await api(svc.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    const list = res.body.paths['/v1/memory'].get;
    const create = res.body.paths['/v1/memory'].post;
    const remove = res.body.paths['/v1/memory/{id}'].delete;
    expect([list.operationId, create.operationId, remove.operationId]).toEqual([
      'listMemory',
      'createMemory',
      'deleteMemory',
    ]);

    const params = Object.fromEntries(list.parameters.map((p: { name: string; in: string }) => [p.name, p]));
    expect(Object.keys(params).sort()).toEqual(['after', 'before', 'category', 'cursor', 'include', 'limit']);
    expect(Object.values(params).every((p) => (p as { in: string }).in === 'query')).toBe(true);
    expect(params.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(Object.keys(list.responses['200'].content['application/json'].schema.properties).sort()).toEqual([
      'data',
      'has_more',
      'next_cursor',
    ]);

    const body = create.requestBody.content['application/json'].schema;
    expect(body.required.sort()).toEqual(['category', 'text']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.category.enum).toEqual(['goal', 'insight', 'preference', 'history']);
    expect(body.properties.text.maxLength).toBe(500);
    expect(create.responses['201']).toBeDefined();

    expect(remove.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(remove.responses['204']).toEqual({
      description: 'Deleted',
      headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    });
    expect(remove.responses['404']).toBeDefined();
  });
});

describe('bad input is a 400 in the envelope, never a 500, and nothing is written', () => {
  const post = (body: unknown, rawBody?: string) =>
    api(svc.url, 'POST', '/v1/memory', { key: alice.apiKey, ...(rawBody ? { rawBody } : { body }) });

  test.each([
    ['a NUL character in the text', { category: 'goal', text: 'walk\u0000more' }, undefined, /NUL/],
    ['a lone surrogate in the text', undefined, '{"category":"goal","text":"walk \\ud800 more"}', /well-formed/],
    ['a NUL character in meta', { category: 'goal', text: 'walk', meta: { note: 'a\u0000b' } }, undefined, /NUL/],
    [
      'meta larger than 2 KB',
      { category: 'goal', text: 'walk', meta: { note: 'x'.repeat(3000) } },
      undefined,
      /at most 2048 bytes/,
    ],
    [
      'meta with more than 20 keys',
      { category: 'goal', text: 'walk', meta: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])) },
      undefined,
      /at most 20 keys/,
    ],
  ])('%s', async (_case, body, rawBody, message) => {
    const before = await entryCount(alice.userId);
    const error = expectError(await post(body, rawBody), 400, 'invalid_field');
    expect(error.message).toMatch(message);
    expect(await entryCount(alice.userId)).toBe(before);
  });

  test('a user at the cap of directly written entries gets a 409 until they delete some', async () => {
    const carol = await svc.createUser();
    // Turn-written entries do not count against the cap; the user's own do.
    await insertEntry(carol.userId, {
      category: 'insight',
      text: 'from a turn',
      createdAt: '2026-01-01T00:00:00Z',
      sourceTurnId: newId('turn'),
    });
    await svc.database.pool.query(
      `INSERT INTO memory_entries (id, user_id, category, text, confidence)
       SELECT 'mem_' || lpad(g::text, 26, '0'), $1, 'goal', 'goal ' || g, 1 FROM generate_series(1, 999) AS g`,
      [carol.userId],
    );
    const write = () =>
      api(svc.url, 'POST', '/v1/memory', { key: carol.apiKey, body: { category: 'goal', text: 'one more' } });

    expect((await write()).status).toBe(201);
    const error = expectError(await write(), 409, 'memory_limit_reached');
    expect(error.message).toContain('1000');
    const removed = await api(svc.url, 'DELETE', `/v1/memory/mem_${'1'.padStart(26, '0')}`, { key: carol.apiKey });
    expect(removed.status).toBe(204);
    expect((await write()).status).toBe(201);
  });
});
