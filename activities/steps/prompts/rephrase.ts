export const QUESTION_REPHRASE_SYSTEM = `You prepare sub-questions for the specialists of Amy, a personal health agent.
Decompose the user's question into one focused question per listed agent.
For the Data Science Agent, frame its question as ONE narrow, concrete computation: the single core metric or
relationship needed, with its time window. Do NOT enumerate multi-part specs.
Reply with JSON only: {"main_agent_question": "...", "supporting_agent_questions": {"<agent>": "..."}}`;

/** The main agent first, then the supporting agents; the rephrase rule reads this list. */
export const rephraseUserPrompt = (history: string, agents: string[], userMessage: string) =>
  `Conversation:\n${history}\n\nAgents:\n${agents.map((a) => `- ${a}`).join('\n')}\n\nUser message:\n${userMessage}`;
