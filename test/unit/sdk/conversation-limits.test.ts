/**
 * `amy.turns.create()` and the limits of a conversation (contracts/conversation-limits.ts), at the fetch
 * boundary: a conversation at the limits is sent, in a body within the API's limit for it whatever its
 * characters; one over them is refused before anything is sent, naming the field as the API would, and
 * counting characters as the API does (code points).
 */
import { Amy, ConversationTooLongError, type FetchLike, type Message } from '@amy/sdk';
import { MAX_CREATE_TURN_BODY_BYTES, MAX_MESSAGE_CHARS, MAX_MESSAGES } from '../../../contracts/conversation-limits';
import { json } from './fake-api';

/** Every POST's body as sent. */
function recordingFetch() {
  const bodies: string[] = [];
  const fetch: FetchLike = async (_input, init = {}) => {
    bodies.push(String(init.body));
    return json({ id: 'turn_01HX2K3M4N5P6Q7R8S9T0V1W2X' }, 201);
  };
  return { fetch, bodies };
}

const amyWith = (fetch: FetchLike) => new Amy({ apiKey: 'amy_k', baseUrl: 'http://api.test', fetch, maxRetries: 0 });

/**
 * `length` characters, the costliest there are in JSON: JSON.stringify writes a control character as a
 * 6-byte `\u00XX` escape (a 3-byte character takes 3, and a 4-byte one is two characters).
 */
const costlyText = (length: number) => '\u0001'.repeat(length);

const conversation = (messages: number, chars: number): Message[] =>
  Array.from({ length: messages }, (_, i) => ({
    role: i % 2 === 0 || i === messages - 1 ? 'user' : 'assistant',
    content: costlyText(chars),
  }));

test('a conversation at the limits is sent, in a body within the API’s limit for a turn’s creation', async () => {
  const { fetch, bodies } = recordingFetch();
  await amyWith(fetch).turns.create({ messages: conversation(MAX_MESSAGES, MAX_MESSAGE_CHARS) });
  expect(bodies).toHaveLength(1);
  const bytes = new TextEncoder().encode(bodies[0]).length;
  // The costliest body JSON.stringify writes, 6 bytes a character: within the limit, which allows for 12.
  expect(bytes).toBeGreaterThan(MAX_MESSAGES * MAX_MESSAGE_CHARS * 6);
  expect(bytes).toBeLessThanOrEqual(MAX_CREATE_TURN_BODY_BYTES);
});

test('one message too many, or one character too many, is refused before anything is sent', async () => {
  const { fetch, bodies } = recordingFetch();
  const amy = amyWith(fetch);
  const tooMany = [...conversation(MAX_MESSAGES, 6), { role: 'user' as const, content: 'and one more' }];
  await expect(amy.turns.create({ messages: tooMany })).rejects.toMatchObject({
    name: 'ConversationTooLongError',
    code: 'invalid_field',
    field: 'messages',
    message: 'messages: 101 messages, and a turn takes at most 100.',
  });
  const tooLong = conversation(3, 6);
  tooLong[1].content = 'x'.repeat(MAX_MESSAGE_CHARS + 1);
  const refused = amy.turns.create({ messages: tooLong });
  await expect(refused).rejects.toBeInstanceOf(ConversationTooLongError);
  await expect(refused).rejects.toMatchObject({ field: 'messages[1].content' });
  // Characters are code points, as the API counts them: an emoji is one, though it is two in String.length.
  const emoji = [{ role: 'user' as const, content: '😀'.repeat(MAX_MESSAGE_CHARS + 1) }];
  await expect(amy.turns.create({ messages: emoji })).rejects.toMatchObject({
    field: 'messages[0].content',
    message: 'messages[0].content: 20001 characters, and a message holds at most 20000 (Unicode code points).',
  });
  expect(bodies).toEqual([]);
  await amy.turns.create({ messages: [{ role: 'user', content: '😀'.repeat(MAX_MESSAGE_CHARS) }] });
  expect(bodies).toHaveLength(1);
});
