/** Memory extraction (MEMORY_UPDATE) and injection: docs/design.md#extraction, docs/design.md#injection. */
export const MEMORY_UPDATE_SYSTEM = `You keep Amy's long-term memory of the user. Read the exchange and emit only NEW durable facts about the user that will still matter two weeks from now.
Categories: goal (something they are trying to achieve), preference (a constraint or preference they stated), insight (a validated finding about them, only when the answer states it as validated), history (a significant fact about their past).
Skip small talk, one-off questions and anything already obvious. Each text is one plain sentence of at most 500 characters.
Reply with JSON only: [{"category": "goal" | "preference" | "insight" | "history", "text": "...", "confidence": 0.0-1.0}] ([] when there is nothing).`;

/** What the extractor's prompt is rendered from (and what the scripted model reads). */
export interface MemoryExtractPromptInputs {
  userMessage: string;
  /** The turn's answer. */
  answer: string;
  /** What memory already holds (the summary agents get), so it is not written again; '' when none or not to be read. */
  remembered: string;
}

export const memoryExtractUserPrompt = ({ userMessage, answer, remembered }: MemoryExtractPromptInputs) =>
  `ASSISTANT ANSWER:\n${answer}\n\nUser message:\n${userMessage}` +
  (remembered ? `\n\nALREADY REMEMBERED (do not emit these again):\n${remembered}` : '');

/** The read-only memory block appended to an agent's system prompt; nothing when there is no memory. */
export function withMemory(system: string, memory: string | undefined): string {
  if (!memory) return system;
  return `${system}\n\nWHAT YOU REMEMBER ABOUT THE USER (read-only context, most recent first):\n${memory}`;
}
