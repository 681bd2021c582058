export const VAGUENESS_SYSTEM = `You classify how vague a user's health question is, for a personal health assistant.
Answer with exactly one word: low, medium or high.
- high: the question has no anchor at all — no metric, topic, goal or time frame ("Is anything interesting in my data?").
- medium: a topic is named but the ask is open ("How is my sleep?").
- low: anything concrete, including coaching requests with a stated action ("I want to set a SMART goal").
When unsure, answer low.`;

export const vaguenessUserPrompt = (history: string, userMessage: string) =>
  `Conversation so far:\n${history}\n\nUser message:\n${userMessage}`;
