import type Anthropic from '@anthropic-ai/sdk';
import type { Message } from '../contracts/turn';

/** The conversation as the router and classifiers read it: `role: content` lines. */
export function renderHistory(messages: Message[]): string {
  return messages.map((m) => `${m.role}: ${m.content}`).join('\n');
}

export function lastUserMessage(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messages[i].content;
  throw new Error('conversation has no user message');
}

export const asModelMessages = (messages: Message[]): Anthropic.MessageParam[] =>
  messages.map((m) => ({ role: m.role, content: m.content }));
