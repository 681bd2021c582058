import type { ScriptedRule } from '../types';
import { plainText } from './user-question';

/**
 * Step 8's extractor (MEMORY_UPDATE, docs/design.md#extraction): durable facts the user stated about themselves, one
 * entry per sentence that states a goal ("I want to …"), a preference or constraint ("I prefer …",
 * "I only …", "I'm vegetarian"), or their history ("I used to …", "I've been … for years").
 * Nothing from the assistant's answer, and nothing from a plain question.
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
      const match = PATTERNS.find(({ pattern }) => pattern.test(sentence));
      if (!match || remembered.includes(sentence.toLowerCase())) return [];
      return [{ category: match.category, text: sentence.slice(0, 500), confidence: 0.8 }];
    });
    return { text: JSON.stringify(entries) };
  },
};
