/**
 * Asking back through `@amy/sdk` against a scripted API at the fetch boundary: `interaction` sent on create,
 * `turn.input_required` and `turn.input_received` read as typed events, and `amy.turns.respond` posting the
 * answer once (one Idempotency-Key across its retries) and turning the API's refusals into their classes.
 */
import {
  Amy,
  BadRequestError,
  ConflictError,
  GoneError,
  InputAlreadyReceivedError,
  InputExpiredError,
  InputNotRequestedError,
  NotFoundError,
  type FetchLike,
  type TurnStreamEvent,
} from '@amy/sdk';
import { formatEvent, json, streamingResponse, TURN_ID, type LogEvent } from './fake-api';

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string | undefined;
}

function scripted(answers: Array<Response | Error>) {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (input, init = {}) => {
    seen.push({
      method: init.method ?? 'GET',
      url: new URL(input),
      headers: new Headers(init.headers),
      body: init.body as string,
    });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    return answer.clone();
  };
  return { fetch, seen };
}

const amyWith = (fetch: FetchLike) =>
  new Amy({ apiKey: 'amy_k', baseUrl: 'http://api.test/', fetch, retryDelayMs: 1, maxRetryDelayMs: 5 });

const envelope = (code: string, status: number) =>
  json(
    { error: { code, message: `it is ${code}`, request_id: 'req_01ABC', docs_url: `https://docs/#${code}` } },
    status,
  );

const REQUEST = {
  turn_id: TURN_ID,
  request_id: 'inq_1',
  kind: 'confirmation',
  question: 'Scan all your numbers (about a minute), or answer quickly?',
  options: [
    { id: 'scan', label: 'Scan everything' },
    { id: 'quick', label: 'Answer quickly' },
  ],
  free_text: false,
  default_option_id: 'quick',
  expires_at: '2026-11-23T10:15:00.000Z',
  estimate: { cost_usd: 0.04, duration_seconds: 60 },
};
const RECEIVED = {
  request_id: 'inq_1',
  option_id: 'scan',
  text: null,
  source: 'user',
  at: '2026-11-23T10:00:05.000Z',
};

test('create sends interaction as given', async () => {
  const { fetch, seen } = scripted([json({ id: TURN_ID, status: 'queued', last_event_id: 0 }, 201)]);
  await amyWith(fetch).turns.create({
    messages: [{ role: 'user', content: 'anything worth knowing?' }],
    interaction: { accepts: ['confirmation', 'clarification'], timeout_seconds: 60 },
  });
  expect(JSON.parse(seen[0].body!)).toMatchObject({
    interaction: { accepts: ['confirmation', 'clarification'], timeout_seconds: 60 },
  });
});

test('the question and its receipt arrive as typed events', async () => {
  const log: LogEvent[] = [
    { id: 1, type: 'turn.started', data: { turn_id: TURN_ID, at: '2026-11-23T10:00:00.000Z' } },
    { id: 2, type: 'turn.input_required', data: REQUEST },
    { id: 3, type: 'turn.input_received', data: { ...RECEIVED, turn_id: TURN_ID } },
    {
      id: 4,
      type: 'turn.failed',
      data: {
        turn_id: TURN_ID,
        cost_usd: 0,
        error: { code: 'cancelled', message: 'x', request_id: 'r', docs_url: 'd' },
      },
    },
  ];
  const fetch: FetchLike = async (_input, init) =>
    streamingResponse(log.map(formatEvent).join(''), 'close', init?.signal ?? undefined);
  const events: TurnStreamEvent[] = [];
  for await (const event of amyWith(fetch).turns.stream(TURN_ID)) events.push(event);
  const asked = events.find((e) => e.type === 'turn.input_required');
  const received = events.find((e) => e.type === 'turn.input_received');
  // Narrowed on `type`: the fields are typed, not `unknown`.
  if (asked?.type !== 'turn.input_required' || received?.type !== 'turn.input_received') throw new Error('missing');
  expect(asked.options.map((o) => o.id)).toEqual(['scan', 'quick']);
  expect(asked.estimate?.cost_usd).toBe(0.04);
  expect(asked.default_option_id).toBe('quick');
  expect(received.source).toBe('user');
});

test('respond posts the answer to /v1/turns/:id/input with an Idempotency-Key and returns the receipt', async () => {
  const { fetch, seen } = scripted([json(RECEIVED)]);
  const receipt = await amyWith(fetch).turns.respond(TURN_ID, { request_id: 'inq_1', option_id: 'scan' });
  expect(receipt).toEqual(RECEIVED);
  expect(seen).toHaveLength(1);
  expect(seen[0].method).toBe('POST');
  expect(seen[0].url.pathname).toBe(`/v1/turns/${TURN_ID}/input`);
  expect(JSON.parse(seen[0].body!)).toEqual({ request_id: 'inq_1', option_id: 'scan' });
  expect(seen[0].headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
});

test('a text answer, with a key of the caller, is sent with that key on every retry', async () => {
  const { fetch, seen } = scripted([
    Object.assign(new TypeError('fetch failed'), { cause: new Error('ECONNRESET') }),
    envelope('internal_error', 503),
    json({ ...RECEIVED, option_id: null, text: 'only sleep' }),
  ]);
  const receipt = await amyWith(fetch).turns.respond(
    TURN_ID,
    { request_id: 'inq_1', text: 'only sleep' },
    { idempotencyKey: 'answer-1' },
  );
  expect(receipt.text).toBe('only sleep');
  expect(seen).toHaveLength(3);
  expect(seen.map((s) => s.headers.get('idempotency-key'))).toEqual(['answer-1', 'answer-1', 'answer-1']);
  expect(seen.map((s) => s.body)).toEqual(Array(3).fill(JSON.stringify({ request_id: 'inq_1', text: 'only sleep' })));
});

test.each([
  [409, 'input_not_requested', InputNotRequestedError, ConflictError],
  [409, 'input_already_received', InputAlreadyReceivedError, ConflictError],
  [410, 'input_expired', InputExpiredError, GoneError],
  [404, 'not_found', NotFoundError, NotFoundError],
  [400, 'invalid_field', BadRequestError, BadRequestError],
])('%i %s is a %p, thrown at once', async (status, code, Class, Parent) => {
  const { fetch, seen } = scripted([envelope(code, status)]);
  const error = await amyWith(fetch)
    .turns.respond(TURN_ID, { request_id: 'inq_1', option_id: 'scan' })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Class);
  expect(error).toBeInstanceOf(Parent);
  expect(error).toMatchObject({ status, code, requestId: 'req_01ABC' });
  expect(seen).toHaveLength(1);
});
