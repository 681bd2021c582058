/**
 * The graceful edges of the offline model: what Amy says when a question asks for something the data
 * does not hold, or cannot be read at all. Neither reply contains a digit: nothing in it went through
 * the Fact Sheet, so a number would be an invented one.
 */
import { AVAILABLE_IN_WORDS } from './metrics';

/** Example questions that work on the demo data, one per kind of ask. */
export const EXAMPLE_QUESTIONS = [
  'How much deep sleep do I usually get these days?',
  'Does stress affect my sleep?',
  'Help me get more active based on my data.',
];

const list = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/** "Your data doesn't include blood pressure. What I can look at: …". */
export function unavailableReply(missing: string[]): string {
  // Written without digits ("VO₂ max"), like every reply that did not go through the Fact Sheet.
  const what = list([...new Set(missing)].map((name) => name.replace(/2/g, '₂'))) || 'that';
  return (
    `Your data doesn't include ${what}, so I can't look at it for you. ` +
    `What I can look at: ${AVAILABLE_IN_WORDS}. ` +
    `For example: "${EXAMPLE_QUESTIONS[0]}"`
  );
}

/** A short clarifying question with questions that work, instead of "I'm not sure I can help". */
export function clarifyingReply(): string {
  return (
    "I'm not sure what you'd like me to look at. Could you say a bit more? For example:\n" +
    EXAMPLE_QUESTIONS.map((q) => `- ${q}`).join('\n')
  );
}
