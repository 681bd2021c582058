import type { FinishDecision, RecommendVerdict } from './types';

const VERDICT_LINE = /\[VERDICT\]\s*:\s*(YESREC|NOREC)\b/i;

/** Module 1's answer, `[VERDICT]: YESREC | NOREC` anywhere in the text; null when it has none. */
export function parseRecommendVerdict(text: string): RecommendVerdict | null {
  const match = VERDICT_LINE.exec(text);
  return match ? (match[1].toUpperCase() as RecommendVerdict) : null;
}

/** Module 3's answer, exactly one word (case and punctuation aside); null otherwise. */
export function parseFinishDecision(text: string): FinishDecision | null {
  const word = text.replace(/[^A-Za-z]/g, '').toUpperCase();
  return word === 'FINISH' || word === 'CONTINUE' ? word : null;
}
