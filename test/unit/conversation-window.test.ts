/**
 * What of a long conversation a turn's steps read (api/temporal/conversation-window.ts): its end, within a
 * budget of JSON bytes, each message whole, from a user's message on; a conversation that fits, as sent.
 */
import { conversationWindow, CONVERSATION_WINDOW_BYTES } from '../../api/temporal/conversation-window';
import { MAX_MESSAGE_CHARS, MAX_MESSAGES } from '../../contracts/conversation-limits';
import type { Message } from '../../contracts/turn';

const said = (role: Message['role'], content: string): Message => ({ role, content });
const jsonBytes = (messages: Message[]) => Buffer.byteLength(JSON.stringify(messages), 'utf8');

test('a conversation within the budget is read as sent, even one that starts with the assistant', () => {
  const messages = [said('assistant', 'Hi, I am Amy.'), said('user', 'How did I sleep?')];
  expect(conversationWindow(messages)).toBe(messages);
});

test('a long one is read from its end: whole messages, newest first, from a user’s message on', () => {
  // Each message is about 30 KB of JSON: the budget (128 KiB) holds four of them, the last included.
  const text = (n: number) => `${n} ${'健'.repeat(10_000)}`;
  const messages = Array.from({ length: 11 }, (_, i) => said(i % 2 === 0 ? 'user' : 'assistant', text(i)));
  const read = conversationWindow(messages);
  // The last four are 7 to 10, and 7 is the assistant's: the window starts at the user's after it.
  expect(read.map((m) => m.content.split(' ')[0])).toEqual(['8', '9', '10']);
  expect(read[0].role).toBe('user');
  expect(read.at(-1)).toBe(messages.at(-1));
  expect(jsonBytes(read)).toBeLessThanOrEqual(CONVERSATION_WINDOW_BYTES);
});

test('at the limits, the question is always read, and the window stays within its budget', () => {
  const longest = (role: Message['role']) => said(role, '\u0001'.repeat(MAX_MESSAGE_CHARS));
  const messages = Array.from({ length: MAX_MESSAGES }, (_, i) => longest(i % 2 === 0 ? 'assistant' : 'user'));
  const read = conversationWindow(messages);
  expect(read).toEqual([messages.at(-1)]);
  expect(jsonBytes(read)).toBeLessThanOrEqual(CONVERSATION_WINDOW_BYTES);

  const plain = Array.from({ length: MAX_MESSAGES }, (_, i) => said(i % 2 ? 'assistant' : 'user', 'a'.repeat(20_000)));
  plain[MAX_MESSAGES - 1] = said('user', 'and now?');
  const readPlain = conversationWindow(plain);
  expect(readPlain.length).toBeGreaterThan(1);
  expect(readPlain[0].role).toBe('user');
  expect(readPlain).toEqual(plain.slice(plain.length - readPlain.length));
  expect(jsonBytes(readPlain)).toBeLessThanOrEqual(CONVERSATION_WINDOW_BYTES);
});
