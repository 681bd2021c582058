/**
 * Kept apart from ./turn.ts so that workflow code can use it without bundling zod and every contract
 * schema into each workflow's sandbox (about 30 ms of CPU per turn to set up).
 */
import type { Message } from './turn';

/** What the user asked this turn: the conversation's last user message. */
export function lastUserMessage(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messages[i].content;
  throw new Error('conversation has no user message');
}
