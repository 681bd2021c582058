/**
 * What of a conversation a turn's steps read. A client sends the whole conversation on every turn, up to 100
 * messages of 20,000 characters (contracts/conversation-limits.ts): several megabytes of text. The Turn keeps
 * it as sent. But the turn's workflow carries its conversation in its input, and in the input of every step
 * that reads it, where Temporal refuses a payload over 2 MB (and Step inputs are meant to stay small enough to
 * read in the Web UI); and the model reads it in each of those prompts, within its context window and at a
 * price per token. So the steps read the conversation's end, at most CONVERSATION_WINDOW_BYTES of it as JSON:
 *
 * - the last message, the question, always (20,000 characters are at most 120,000 bytes of JSON);
 * - the messages before it, newest first, each whole or not at all, while they fit;
 * - from a user's message on, as a conversation starts, when older ones are left out.
 *
 * A conversation that fits is read as sent, whatever its first message.
 */
import type { Message } from '../../contracts/turn';

export const CONVERSATION_WINDOW_BYTES = 128 * 1024;

/** The JSON bytes a message takes in the workflow's input, its separator included. */
const jsonBytes = (message: Message) => Buffer.byteLength(JSON.stringify(message), 'utf8') + 1;

export function conversationWindow(messages: Message[], budgetBytes = CONVERSATION_WINDOW_BYTES): Message[] {
  let start = messages.length - 1;
  let used = jsonBytes(messages[start]);
  while (start > 0) {
    const bytes = jsonBytes(messages[start - 1]);
    if (used + bytes > budgetBytes) break;
    used += bytes;
    start--;
  }
  if (start === 0) return messages;
  while (start < messages.length - 1 && messages[start].role !== 'user') start++;
  return messages.slice(start);
}
