import type { Message } from '../../../contracts/turn';
import { lastUserMessage } from '../../../contracts/last-user-message';
import { renderHistory } from '../../runtime/conversation';

export const VAGUENESS_SYSTEM = `You classify how vague a user's health question is, for a personal health assistant.
Answer with exactly one word: low, medium or high.
- high: the question has no anchor at all — no metric, topic, goal or time frame ("Is anything interesting in my data?").
- medium: a topic is named but the ask is open ("How is my sleep?").
- low: anything concrete, including coaching requests with a stated action ("I want to set a SMART goal").
When unsure, answer low.`;

/** What the classifier's prompt is rendered from (and what the scripted model reads). */
export interface VaguenessPromptInputs {
  /** The conversation so far, the current user message last. */
  messages: Message[];
}

export const vaguenessUserPrompt = ({ messages }: VaguenessPromptInputs) =>
  `Conversation so far:\n${renderHistory(messages)}\n\nUser message:\n${lastUserMessage(messages)}`;
