import type { Message } from '../../../contracts/turn';
import { lastUserMessage } from '../../../contracts/last-user-message';
import { renderHistory } from '../../runtime/conversation';

export const ORCHESTRATOR_SYSTEM = `You are the orchestrator of Amy, a personal health agent with three specialists:
- Data Science Agent: computes over the user's own wearable and lab data.
- Domain Expert Agent: medical and scientific knowledge, reference ranges, literature.
- Health Coach Agent: goal setting, behaviour change, wellness plans.
The Hypothesis Investigator is never assigned here.`;

const TASK_ASSIGNMENT = `Assign the user's request to agents. Match one collaboration pattern:
1. Understand a health topic, facts or news → main: Domain Expert Agent.
2. Understand my time-series data, single source → main: Data Science Agent.
3. Understand my data and need external knowledge → main: Domain Expert Agent; supporting: Data Science Agent.
4. Wellness advice or goal-setting without data → main: Health Coach Agent.
5. Wellness advice based on my data → main: Health Coach Agent; supporting: Data Science Agent.
6. Wellness advice with data and medical context → main: Health Coach Agent; supporting: Data Science Agent; Domain Expert Agent.
[STEP 3] If the user asks about something potentially related to their personal data, even just a bit, and the main
agent is not the Data Science Agent, add the Data Science Agent as a supporting agent.
Corner cases (small talk, thanks, greetings, device or account help, anything outside health) → main_agent "".
Reply with JSON only: {"main_agent": "...", "supporting_agents": "A; B" or "", "collaboration_workflow": "..."}`;

/** What the router's prompt is rendered from (and what the scripted model reads). */
export interface RoutingPromptInputs {
  /** The conversation so far; the last user message is the [TOPIC]. */
  messages: Message[];
}

export const routingUserPrompt = ({ messages }: RoutingPromptInputs) =>
  `${TASK_ASSIGNMENT}\n\nConversation:\n${renderHistory(messages)}\n\n[TOPIC] the last user message.\nUser message:\n${lastUserMessage(messages)}`;
