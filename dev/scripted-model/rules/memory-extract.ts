import type { ScriptedRule } from '../types';
import { plainText } from './user-question';

/**
 * Step 8's extractor (MEMORY_UPDATE, docs/design.md#extraction): durable facts the user stated about themselves, one
 * entry per sentence that states a goal ("I want to …"), a preference or constraint ("I prefer …",
 * "I only …", "I'm vegetarian"), or their history ("I used to …", "I've been … for years"), and whatever the user
 * asks to be remembered ("Remember that …", "Please note …"), kept as they said it.
 * Nothing from the assistant's answer, and nothing from a plain question.
 *
 * Like a careless model, it copies each sentence whole, whatever it holds: a token or a password the user pasted
 * reaches the memory writes, whose own check (platform/credentials-in-text.ts) is what keeps it out of memory.
 */
const PATTERNS: Array<{ category: 'goal' | 'preference' | 'history'; pattern: RegExp }> = [
  { category: 'goal', pattern: /\b(i want to|i'd like to|i would like to|my goal is|i'm trying to|i am trying to)\b/i },
  {
    category: 'preference',
    pattern:
      /\b(i prefer|i only|i don't|i do not|i can't|i cannot|i'm (a )?vegetarian|i am (a )?vegetarian|i'm vegan|i hate)\b/i,
  },
  { category: 'history', pattern: /\b(i used to|i have been|i've been|i was diagnosed|i ran|i had)\b/i },
];

/** The user asks for something to be kept: the lead-in goes, the rest is the entry. */
const REMEMBER_THIS = /^(?:please\s+)?(?:remember|note|keep in mind|don't forget|do not forget)(?:\s+that)?[\s:,]+/i;

/** The entry a sentence states, if any: its category and its text. */
function stated(sentence: string): { category: 'goal' | 'preference' | 'history'; text: string } | null {
  const asked = REMEMBER_THIS.exec(sentence);
  const rest = asked ? sentence.slice(asked[0].length) : '';
  const text = asked ? `${rest.charAt(0).toUpperCase()}${rest.slice(1)}` : sentence;
  if (!text) return null;
  const category = PATTERNS.find(({ pattern }) => pattern.test(text))?.category ?? (asked ? 'history' : null);
  return category ? { category, text } : null;
}

export const memoryExtract: ScriptedRule<'memory'> = {
  step: 'memory',
  respond(req) {
    const sentences = plainText(req.inputs.userMessage)
      .split(/(?<=[.!?])\s+/)
      .map((s) => s.trim())
      .filter((s) => s && !s.endsWith('?'));
    // What memory already holds is not emitted again (the prompt's ALREADY REMEMBERED block).
    const remembered = req.inputs.remembered.toLowerCase();
    const entries = sentences.flatMap((sentence) => {
      const entry = stated(sentence);
      if (!entry || remembered.includes(entry.text.toLowerCase())) return [];
      return [{ category: entry.category, text: entry.text.slice(0, 500), confidence: 0.8 }];
    });
    return { text: JSON.stringify(entries) };
  },
};
