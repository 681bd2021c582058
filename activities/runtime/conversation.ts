import type Anthropic from '@anthropic-ai/sdk';
import type { Message } from '../../contracts/turn';

/** The conversation as the router and classifiers read it: `role: content` lines. */
export function renderHistory(messages: Message[]): string {
  return messages.map((m) => `${m.role}: ${m.content}`).join('\n');
}

export const asModelMessages = (messages: Message[]): Anthropic.MessageParam[] =>
  messages.map((m) => ({ role: m.role, content: m.content }));
