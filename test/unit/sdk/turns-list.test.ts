/**
 * `amy.turns.list()` against a scripted `GET /v1/turns` at the fetch boundary: a page to await, every
 * turn across pages with `for await`, the filters sent again with each cursor, and errors as classes.
 */
import { Amy, AuthenticationError, BadRequestError, Page, PagePromise, type FetchLike, type Turn } from '@amy/sdk';
import { json } from './fake-api';

const turn = (i: number): Turn => ({
  id: `turn_${String(i).padStart(26, '0')}`,
  status: 'completed',
  created_at: `2026-11-23T10:00:${String(59 - i).padStart(2, '0')}.000Z`,
  completed_at: null,
  messages: [{ role: 'user', content: `question ${i}` }],
  result: null,
  error: null,
  attempt: 1,
  previous_attempts: [],
  cost_usd: 0.01,
  last_event_id: 9,
  data_snapshot: null,
});

/** `GET /v1/turns` over `total` turns, `cursor` being the index to start at; every request is kept. */
function pagedTurns(total: number) {
  const seen: URL[] = [];
  const fetch: FetchLike = async (input, init = {}) => {
    const url = new URL(input);
    seen.push(url);
    expect(init.method ?? 'GET').toBe('GET');
    expect(url.pathname).toBe('/v1/turns');
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const start = Number(url.searchParams.get('cursor') ?? 0);
    const data = Array.from({ length: Math.max(0, Math.min(limit, total - start)) }, (_, i) => turn(start + i));
    const more = start + limit < total;
    return json({ data, next_cursor: more ? String(start + limit) : null, has_more: more });
  };
  return { fetch, seen };
}

const amyWith = (fetch: FetchLike) =>
  new Amy({ apiKey: 'amy_k', baseUrl: 'http://api.test', fetch, retryDelayMs: 1, maxRetryDelayMs: 5 });

test('awaiting list() gives the first page, with the status filter and page size sent', async () => {
  const { fetch, seen } = pagedTurns(5);
  const list = amyWith(fetch).turns.list({ status: 'completed', limit: 2 });
  expect(list).toBeInstanceOf(PagePromise);
  const page = await list;
  expect(page).toBeInstanceOf(Page);
  expect(page).toMatchObject({ data: [turn(0), turn(1)], next_cursor: '2', has_more: true });
  expect(Object.fromEntries(seen[0].searchParams)).toEqual({ status: 'completed', limit: '2' });

  const next = await page.getNextPage();
  expect(next.data.map((t) => t.id)).toEqual([turn(2).id, turn(3).id]);
  expect(Object.fromEntries(seen[1].searchParams)).toEqual({ status: 'completed', limit: '2', cursor: '2' });
});

test('for await over list() yields every turn across pages, one page at a time', async () => {
  const { fetch, seen } = pagedTurns(5);
  const ids: string[] = [];
  for await (const t of amyWith(fetch).turns.list({ limit: 2 })) ids.push(t.id);
  expect(ids).toEqual([0, 1, 2, 3, 4].map((i) => turn(i).id));
  expect(seen.map((u) => u.searchParams.get('cursor'))).toEqual([null, '2', '4']);
});

test('no params asks for the API’s defaults; a cursor starts from a page you already have', async () => {
  const { fetch, seen } = pagedTurns(30);
  const first = await amyWith(fetch).turns.list();
  expect(seen[0].search).toBe('');
  expect(first.data).toHaveLength(20);
  const resumed = await amyWith(fetch).turns.list({ cursor: first.next_cursor! });
  expect(resumed.data.map((t) => t.id)).toEqual(Array.from({ length: 10 }, (_, i) => turn(20 + i).id));
  expect(resumed.hasNextPage()).toBe(false);
  expect(() => resumed.getNextPage()).toThrow('There is no next page.');
});

test('nothing is requested until the list is awaited or iterated, and only once for both', async () => {
  const { fetch, seen } = pagedTurns(1);
  const list = amyWith(fetch).turns.list();
  expect(seen).toHaveLength(0);
  const page = await list;
  for await (const t of list) expect(t).toEqual(page.data[0]);
  expect(seen).toHaveLength(1);
});

test.each([
  [400, 'invalid_field', BadRequestError],
  [401, 'invalid_api_key', AuthenticationError],
])('a %i %s answer is a %p', async (status, code, Class) => {
  const fetch: FetchLike = async () =>
    json({ error: { code, message: 'no', request_id: 'req_1', docs_url: 'https://d' } }, status);
  const error = await amyWith(fetch)
    .turns.list({ cursor: 'bogus' })
    .then(
      () => null,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(Class);
  expect(error).toMatchObject({ status, code, requestId: 'req_1' });
});
