import { AGENT_LABELS, type RoutableAgent } from '../../../contracts/steps';
import type { Message } from '../../../contracts/turn';
import { lastUserMessage } from '../../../contracts/last-user-message';
import { renderHistory } from '../../runtime/conversation';

export const QUESTION_REPHRASE_SYSTEM = `You prepare sub-questions for the specialists of Amy, a personal health agent.
Decompose the user's question into one focused question per listed agent.
For the Data Science Agent, frame its question as ONE narrow, concrete computation: the single core metric or
relationship needed, with its time window. Do NOT enumerate multi-part specs.
Reply with JSON only: {"main_agent_question": "...", "supporting_agent_questions": {"<agent>": "..."}}`;

/** What the rephrase prompt is rendered from (and what the scripted model reads). */
export interface RephrasePromptInputs {
  messages: Message[];
  /** The main agent first, then the supporting agents; the prompt names them by their labels (AGENT_LABELS). */
  agents: RoutableAgent[];
}

export const rephraseUserPrompt = ({ messages, agents }: RephrasePromptInputs) =>
  `Conversation:\n${renderHistory(messages)}\n\nAgents:\n${agents.map((a) => `- ${AGENT_LABELS[a]}`).join('\n')}\n\nUser message:\n${lastUserMessage(messages)}`;
