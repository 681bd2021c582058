/**
 * Long conversations (contracts/conversation-limits.ts): a client sends the whole conversation on every turn,
 * up to 100 messages of 20,000 characters, and the compiled service takes it. At the limits, in multi-byte
 * characters, raw or with every character escaped as some JSON encoders write it, a turn is created (201),
 * keeps the conversation as sent, and completes, its steps reading the conversation's end; just over them, the
 * documented 4xx in the error envelope, and nothing created. Other routes keep their own body limit, and a page
 * of such turns stays bounded.
 */
import { errorEnvelopeSchema } from '../../contracts/errors';
import {
  characterCount,
  MAX_CREATE_TURN_BODY_BYTES,
  MAX_MESSAGE_CHARS,
  MAX_MESSAGES,
} from '../../contracts/conversation-limits';
import { turnListSchema, turnSchema, type Message, type Turn } from '../../contracts/turn';
import { CONVERSATION_WINDOW_BYTES } from '../../api/temporal/conversation-window';
import { TURN_PAGE_MESSAGE_BYTES } from '../../api/tables/turns';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(180_000);

let svc: TestService;
let user: { userId: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService();
  user = await svc.createUser();
});
afterAll(async () => {
  await svc?.close();
});

/**
 * Text of exactly `characters` characters (code points, as the API counts them), `lead` first: Chinese
 * (3 bytes each in UTF-8), emoji (4 bytes, two UTF-16 code units), accented letters, and a newline and a
 * quote, which JSON escapes.
 */
function multiByteText(characters: number, lead = ''): string {
  const pieces = ['健康的睡眠和心率', '😀', 'é', '€', '\n', '"', '🫀'];
  const text = [...lead];
  for (let i = 0; text.length < characters; i++) text.push(...[...pieces[i % pieces.length]]);
  return text.slice(0, characters).join('');
}

/** A conversation at the limits: 100 messages of 20,000 characters each, the last one the user's question. */
function longestConversation(question: string, text = multiByteText): Message[] {
  return Array.from({ length: MAX_MESSAGES }, (_, i) => ({
    role: i % 2 === 1 || i === MAX_MESSAGES - 1 ? 'user' : 'assistant',
    content: text(MAX_MESSAGE_CHARS, i === MAX_MESSAGES - 1 ? `${question} ` : `${i}: `),
  }));
}

/**
 * A string as JSON with every UTF-16 code unit escaped, as an encoder may write it (Python's `json.dumps`
 * does so for everything but ASCII): an emoji takes 12 bytes, `\ud83d\ude00`.
 */
const escapedString = (text: string) =>
  `"${Array.from({ length: text.length }, (_, i) => `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"`;

/** The body of a blocking creation, written with every character of every string escaped. */
const escapedBody = (messages: Message[]) =>
  `{${escapedString('messages')}:[${messages
    .map(
      (m) =>
        `{${escapedString('role')}:${escapedString(m.role)},${escapedString('content')}:${escapedString(m.content)}}`,
    )
    .join(',')}],${escapedString('stream')}:false}`;

async function postTurn(rawBody: string) {
  return api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, rawBody });
}

function expectError(res: { status: number; headers: Headers; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  const { error } = expectSchema(errorEnvelopeSchema, res.body);
  expect(error.code).toBe(code);
  expect(error.request_id).toBe(res.headers.get('x-request-id'));
  expect(error.docs_url).toContain(code);
  return error;
}

const turnCount = () => svc.database.db.turn.count({ where: { userId: user.userId } });

async function completed(turn: Turn): Promise<Turn> {
  await svc.temporal.workflow.getHandle(turn.id).result();
  const read = await api(svc.url, 'GET', `/v1/turns/${turn.id}`, { key: user.apiKey });
  return expectSchema(turnSchema, read.body);
}

describe('a conversation at the limits, in multi-byte characters', () => {
  const messages = longestConversation('thanks!');
  let turn: Turn;

  test('is created (201), kept as sent, and its turn completes, the steps reading its end', async () => {
    svc.scripted.requests.clear();
    const body = JSON.stringify({ messages });
    expect(Buffer.byteLength(body)).toBeGreaterThan(5 * 1024 * 1024);
    const res = await postTurn(body);
    expect(res.status).toBe(201);
    turn = expectSchema(turnSchema, res.body);
    expect(turn.messages).toEqual(messages);

    const ended = await completed(turn);
    expect(ended.status).toBe('completed');
    expect(ended.messages).toEqual(messages);
    // The model was asked about the question, and never given more of the conversation than the window holds.
    const asked = svc.scripted.requests.entries();
    expect(asked.length).toBeGreaterThan(0);
    const question = JSON.stringify(messages[MAX_MESSAGES - 1].content);
    expect(asked.some((request) => JSON.stringify(request.messages).includes(question))).toBe(true);
    for (const request of asked) {
      expect(Buffer.byteLength(JSON.stringify(request.messages))).toBeLessThan(3 * CONVERSATION_WINDOW_BYTES);
    }
    expect(JSON.stringify(asked)).not.toContain(messages[0].content.slice(0, 200));
  });

  test('is created written with every character escaped too, emoji and all: the body limit holds the worst case', async () => {
    // Emoji only: 12 bytes each once escaped, the most a character can take in JSON.
    const emoji = longestConversation(
      'thanks!',
      (characters, lead = '') => lead + '😀'.repeat(characters - lead.length),
    );
    for (const m of emoji) expect(characterCount(m.content)).toBe(MAX_MESSAGE_CHARS);
    const body = escapedBody(emoji);
    expect(JSON.parse(body)).toEqual({ messages: emoji, stream: false });
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_CREATE_TURN_BODY_BYTES - 200 * 1024);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_CREATE_TURN_BODY_BYTES);
    const res = await postTurn(body);
    expect(res.status).toBe(200);
    const ended = expectSchema(turnSchema, res.body);
    expect(ended.status).toBe('completed');
    expect(ended.messages).toEqual(emoji);
  });

  test('just over the limits, the documented 4xx in the envelope, and nothing is created', async () => {
    const before = await turnCount();
    const tooMany = [{ role: 'user', content: 'hello' }, ...messages];
    expect(expectError(await postTurn(JSON.stringify({ messages: tooMany })), 400, 'invalid_field').field).toBe(
      'messages',
    );

    const tooLong = messages.map((m, i) => (i === 42 ? { ...m, content: `${m.content}x` } : m));
    expect(characterCount(tooLong[42].content)).toBe(MAX_MESSAGE_CHARS + 1);
    expect(expectError(await postTurn(JSON.stringify({ messages: tooLong })), 400, 'invalid_field').field).toBe(
      'messages[42].content',
    );

    // Characters are code points: 20,001 emoji are one too many.
    const emoji = [{ role: 'user', content: '😀'.repeat(MAX_MESSAGE_CHARS + 1) }];
    expect(expectError(await postTurn(JSON.stringify({ messages: emoji })), 400, 'invalid_field').field).toBe(
      'messages[0].content',
    );

    // Within the message limits, a body can only pass the byte limit by padding: refused before it is parsed.
    const json = JSON.stringify({ messages });
    const padded = `{${' '.repeat(MAX_CREATE_TURN_BODY_BYTES - Buffer.byteLength(json) + 1)}${json.slice(1)}`;
    expect(Buffer.byteLength(padded)).toBe(MAX_CREATE_TURN_BODY_BYTES + 1);
    const tooBig = expectError(await postTurn(padded), 413, 'payload_too_large');
    expect(tooBig.message).toBe(`The request body exceeds the ${MAX_CREATE_TURN_BODY_BYTES} byte limit.`);

    expect(await turnCount()).toBe(before);
  });
});

test('other routes keep their own body limit (AMY_BODY_LIMIT_BYTES)', async () => {
  const rawBody = JSON.stringify({ text: 'x', category: 'preference', meta: { note: 'y'.repeat(300 * 1024) } });
  const res = await api(svc.url, 'POST', '/v1/memory', { key: user.apiKey, rawBody });
  const error = expectError(res, 413, 'payload_too_large');
  expect(error.message).toBe(`The request body exceeds the ${svc.config.AMY_BODY_LIMIT_BYTES} byte limit.`);
});

test('a page of turns with long conversations ends early, and the pages still hold every turn once', async () => {
  const owner = await svc.createUser();
  for (let i = 0; i < 4; i++) {
    const res = await api(svc.url, 'POST', '/v1/turns', {
      key: owner.apiKey,
      body: { messages: longestConversation(`thanks! ${i}`), stream: false },
    });
    expect(res.status).toBe(200);
  }
  const sizes = await svc.database.pool.query<{ id: string; bytes: number }>(
    `SELECT id, octet_length(messages::text) AS bytes FROM turns WHERE user_id = $1 ORDER BY created_at DESC, id DESC`,
    [owner.userId],
  );
  const bytesOf = new Map(sizes.rows.map((row) => [row.id, Number(row.bytes)]));
  expect([...bytesOf.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(TURN_PAGE_MESSAGE_BYTES);

  const pages: Turn[][] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${cursor}` : '';
    const res = await api(svc.url, 'GET', `/v1/turns?limit=100${query}`, { key: owner.apiKey });
    expect(res.status).toBe(200);
    const page = expectSchema(turnListSchema, res.body);
    pages.push(page.data);
    expect(page.has_more).toBe(page.next_cursor !== null);
    cursor = page.next_cursor;
  } while (cursor !== null);
  expect(pages.flat().map((t) => t.id)).toEqual(sizes.rows.map((row) => row.id));
  expect(pages.length).toBeGreaterThan(1);
  for (const page of pages) {
    const beforeLast = page.slice(0, -1).reduce((sum, t) => sum + bytesOf.get(t.id)!, 0);
    expect(beforeLast).toBeLessThan(TURN_PAGE_MESSAGE_BYTES);
    for (const t of page) expect(t.messages).toHaveLength(MAX_MESSAGES);
  }
});
