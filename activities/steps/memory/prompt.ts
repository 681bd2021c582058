/**
 * Memory extraction (MEMORY_UPDATE): docs/design.md#extraction. Injection, which every step that reads memory
 * uses, is the runtime's (../../runtime/memory-injection.ts).
 */
export const MEMORY_UPDATE_SYSTEM = `You keep Amy's long-term memory of the user. Read the exchange and emit only NEW durable facts about the user that will still matter two weeks from now.
Categories: goal (something they are trying to achieve), preference (a constraint or preference they stated), insight (something established about them that the answer states; a finding computed from their data is remembered by the validator with its verdict and numbers, so never emit one), history (a significant fact about their past).
Skip small talk, one-off questions and anything already obvious. Each text is one plain sentence of at most 500 characters.
Never remember a secret: no password, PIN, API key, access token, private key, card number or other credential, even when the user pasted it or asks you to keep it, not in part and not reworded. Leave out any fact that would carry one; memory holds health context, never credentials.
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
