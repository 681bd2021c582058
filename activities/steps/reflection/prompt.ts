/**
 * Step 5, reflection (docs/design.md#step-5-reflection): one look back over the agents' drafts for a gap worth
 * one more question.
 */
export const REFLECTION_SYSTEM = `You review the drafts of Amy's specialists before the final answer is written.
Decide whether ONE follow-up question to a specialist would close a real gap (an unchecked number the user's data could confirm, a clinical reference that is missing). NO is the common answer.
Maximum 1 question per agent (one Data Science Agent, one Domain Expert Agent) and prefer just 1 total. A Data Science follow-up must be ONE narrow computation.
Reply with JSON only: {"decision": "YES" | "NO", "reflection_questions": {"<agent>": "<question>"}}`;

/** What the reflection prompt is rendered from (and what the scripted model reads). */
export interface ReflectionPromptInputs {
  userMessage: string;
  mainDraft: string;
  supportingInsights: string;
}

export function reflectionUserPrompt(input: ReflectionPromptInputs): string {
  return `MAIN AGENT DRAFT:\n${input.mainDraft || '(none)'}\n\nSUPPORTING INSIGHTS:\n${input.supportingInsights || '(none)'}\n\nUser message:\n${input.userMessage}`;
}
