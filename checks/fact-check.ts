/**
 * Step 7b, the numeric fact-check (docs/design.md#the-fact-check), binding: every number an answer
 * states must trace to the Fact Sheet (2 % relative, 0.05 absolute floor), to a ratio of two sheet
 * values, to the user's own message, or to the Domain Expert's prose. Deterministic, no model call.
 *
 * - **What is checked**: every number, whatever its size. Only what is plainly not a quantity is
 *   left alone: list indices ("1." at a line start, "(2)", "2)"),
 *   years, ids ("ds-001", "#12"), dates (ISO, "1 June", "June 1st"), links, arXiv ids and other
 *   citations, `N=…` sample notes. A number with a unit or a metric word right after it
 *   (`UNIT_WORDS`: "58 bpm", "45 minutes", "7 nights") is a quantity even where it would look like
 *   an index or a year ("(2 nights)", "2019 steps").
 * - **What a number that does not trace costs**: the step that wrote the answer repairs it (synthesis
 *   writes it once more, told which numbers; see ./synthesis.ts), and whatever is still untraced is
 *   removed here (`removeUntraced`): the sentence that holds it is dropped, or, when that would leave
 *   no answer, the number is replaced by a hedge. An answer that leaves this module states no number
 *   that does not trace, and is never empty.
 */
import type { FactCheckIssue, FactCheckRemoval } from '../contracts/turn';
import { isWindowLength, type FactSheet } from './fact-sheet';
import { extractNumbers, type NumberToken } from './numbers';
import { withinTolerance } from '../contracts/fact-tolerance';

export type { FactCheckIssue };

/** What an answer's numbers may trace to. */
export interface FactCheckReferences {
  sheet: FactSheet;
  /** The user's own message: an answer may echo its numbers ("your 7.3% drop"). */
  userMessage: string;
  /** The Domain Expert's prose: literature reference values it gave (PSQI MCID = 4.4). */
  expertProse?: string;
}

// The tolerance is a contract the SDK shares, so a client marks numbers by the same rule.
export { withinTolerance } from '../contracts/fact-tolerance';

function referenceValues({ sheet, userMessage, expertProse = '' }: FactCheckReferences): number[] {
  const values = Object.values(sheet);
  // A window's length is where a value was measured, not a measurement: no ratio is taken with it.
  const measured = Object.entries(sheet).flatMap(([claim, value]) => (isWindowLength(claim) ? [] : [value]));
  const ratios: number[] = [];
  for (const a of measured) for (const b of measured) if (b !== 0 && a !== b) ratios.push(a / b);
  const echoed = [...extractNumbers(userMessage), ...extractNumbers(expertProse)].map((t) => t.value);
  return [...values, ...ratios, ...echoed];
}

export interface NumberCheck {
  /** The numbers the check read: every quantity of the text. */
  checked: NumberToken[];
  /** Those that trace to no reference. */
  untraced: NumberToken[];
}

export function checkNumbers(text: string, references: FactCheckReferences): NumberCheck {
  const values = referenceValues(references);
  const checked = extractNumbers(text).filter((token) => token.notAQuantity === null);
  const untraced = checked.filter((token) => {
    // "7.3 %" may be a sheet fraction 0.073 rendered as a percentage.
    const candidates = token.isPercent ? [token.value, token.value / 100] : [token.value];
    return !candidates.some((v) => values.some((r) => withinTolerance(v, r)));
  });
  return { checked, untraced };
}

export const toIssue = (token: NumberToken): FactCheckIssue => ({ value: token.value, severity: 'warn' });

export function factCheckReply(
  reply: string,
  sheet: FactSheet,
  userMessage: string,
  expertProse = '',
): FactCheckIssue[] {
  return checkNumbers(reply, { sheet, userMessage, expertProse }).untraced.map(toIssue);
}

// ---------------------------------------------------------------------------------------------------
// Removal: what is still untraced after the repair leaves the answer.

/** Stands where a number was when dropping its sentence would leave no answer. */
export const UNVERIFIED_NUMBER = 'a figure I could not verify';

/** The answer when nothing of it is left to say: no number, so nothing in it can fail the check. */
export const UNVERIFIED_ANSWER =
  "I couldn't verify the numbers behind this answer against your data, so I'd rather not state them. " +
  'Could you ask about one metric over a specific period, so I can check it properly?';

/** Words whose trailing period does not end a sentence. */
const ABBREVIATION = /(?:^|[\s(])(?:e\.g|i\.e|vs|approx|ca|cf|etc|Dr|Mr|Mrs|Ms|Prof|St|et al|No|Fig)\.$/i;

export interface Span {
  start: number;
  end: number;
}

/**
 * The sentences of `text`, each with the spaces after it: a sentence ends at `.`, `!` or `?` (and any
 * closing quote or bracket) before whitespace, and at every line break, so a list item is its own.
 */
export function sentenceSpans(text: string): Span[] {
  const spans: Span[] = [];
  let start = 0;
  const close = (end: number) => {
    let stop = end;
    while (stop < text.length && (text[stop] === ' ' || text[stop] === '\t')) stop++;
    if (stop > start) spans.push({ start, end: stop });
    start = stop;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      close(i);
      spans.push({ start: i, end: i + 1 });
      start = i + 1;
    } else if (c === '.' || c === '!' || c === '?') {
      let end = i + 1;
      while (end < text.length && /[.!?"'”’)\]]/.test(text[end])) end++;
      const atBoundary = end >= text.length || /\s/.test(text[end]);
      if (atBoundary && !(c === '.' && ABBREVIATION.test(text.slice(start, i + 1)))) {
        close(end);
        i = start - 1;
      }
    }
  }
  if (start < text.length) spans.push({ start, end: text.length });
  return spans;
}

export const hasWords = (text: string) => /[\p{L}\p{N}]/u.test(text.replace(/^[ \t>#*•-]*(?:\d+[.)])?/gm, ''));

/** The text without the given sentences; a line left with nothing but its list marker goes too. */
function withoutSentences(text: string, dropped: Span[]): string {
  const lines: string[] = [];
  let line = '';
  let touched = false;
  const endLine = () => {
    if (!(touched && !hasWords(line))) lines.push(touched ? line.trimEnd() : line);
    line = '';
    touched = false;
  };
  for (const span of sentenceSpans(text)) {
    const piece = text.slice(span.start, span.end);
    if (piece === '\n') {
      endLine();
      continue;
    }
    if (dropped.some((d) => d.start === span.start)) touched = true;
    else line += piece;
  }
  endLine();
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function withHedges(text: string, untraced: NumberToken[]): string {
  let out = text;
  for (const token of [...untraced].sort((a, b) => b.start - a.start)) {
    out = out.slice(0, token.start) + UNVERIFIED_NUMBER + out.slice(token.end);
  }
  return out.trim();
}

export interface CheckedAnswer {
  /** The answer with no untraced number in it; never empty. */
  answer: string;
  removed: FactCheckRemoval[];
}

/**
 * Removes every number that does not trace: the sentence holding it is dropped; when that would leave
 * nothing, the numbers are replaced by `UNVERIFIED_NUMBER` instead; an answer with nothing to say is
 * `UNVERIFIED_ANSWER`. Checked again after each pass, so what it returns passes `checkNumbers`.
 */
export function removeUntraced(answer: string, references: FactCheckReferences): CheckedAnswer {
  const removed: FactCheckRemoval[] = [];
  let text = answer.trim();
  // One pass suffices; a second covers a number whose reading changed with its neighbours gone.
  for (let pass = 0; pass < 3 && hasWords(text); pass++) {
    const { untraced } = checkNumbers(text, references);
    if (untraced.length === 0) return { answer: pass === 0 ? answer : text, removed };
    const spans = sentenceSpans(text);
    const holding = (token: NumberToken) => spans.find((s) => token.start >= s.start && token.start < s.end)!;
    const dropped = [...new Set(untraced.map(holding))];
    const shorter = withoutSentences(text, dropped);
    const action = hasWords(shorter) ? 'dropped_sentence' : 'hedged_number';
    for (const token of untraced) {
      const span = holding(token);
      removed.push({ value: token.value, sentence: text.slice(span.start, span.end).trim(), action });
    }
    text = action === 'dropped_sentence' ? shorter : withHedges(text, untraced);
  }
  if (hasWords(text) && checkNumbers(text, references).untraced.length === 0) return { answer: text, removed };
  return { answer: UNVERIFIED_ANSWER, removed };
}
