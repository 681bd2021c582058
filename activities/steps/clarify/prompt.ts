import type { Message } from '../../../contracts/turn';
import { lastUserMessage } from '../../../contracts/last-user-message';
import { renderHistory } from '../../runtime/conversation';

export const CLARIFY_SYSTEM = `You decide whether a personal health assistant should ask the user what they mean before answering.
Ask only when the question can be read in ways that give different answers from the user's own data:
- which metric (sleep can be its duration, its score or its deep sleep),
- which time window (lately, recently, these days),
- which comparison (against what, or between which periods),
- which of several lab markers (cholesterol can be total, LDL or HDL).
Never ask about a question that is clear enough to answer, small talk, or general knowledge.
When you ask, offer two to four readings as options, put the most likely reading first, and write each label so it
reads as the user's reply ("My sleep score", "The last 7 days").
Reply with JSON only: {"ambiguous": false} or
{"ambiguous": true, "about": "metric" | "window" | "comparison" | "markers", "question": "...",
 "options": [{"id": "short_id", "label": "..."}], "likely_option_id": "...", "free_text": true | false}`;

/** What the clarifier's prompt is rendered from (and what the scripted model reads). */
export interface ClarifyPromptInputs {
  /** The conversation so far, the current user message last. */
  messages: Message[];
}

export const clarifyUserPrompt = ({ messages }: ClarifyPromptInputs) =>
  `Conversation so far:\n${renderHistory(messages)}\n\nUser message:\n${lastUserMessage(messages)}`;
