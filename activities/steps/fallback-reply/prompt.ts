import type Anthropic from '@anthropic-ai/sdk';
import type { Message } from '../../../contracts/turn';
import { asModelMessages } from '../../runtime/conversation';

export const FALLBACK_SYSTEM = `You are Amy, a warm and concise personal health assistant.
The message needs no analysis: reply conversationally in one to three sentences.
Do not state any numbers or health facts about the user.`;

/** What the fallback reply is asked from (and what the scripted model reads): the conversation itself. */
export interface FallbackPromptInputs {
  messages: Message[];
}

export const fallbackMessages = ({ messages }: FallbackPromptInputs): Anthropic.MessageParam[] =>
  asModelMessages(messages);
