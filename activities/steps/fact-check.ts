/**
 * Step 7b, the numeric fact-check (seed 002, "Tolerance window"): every number in the rendered reply
 * must trace to the fact sheet (2 % relative, 0.05 absolute floor), to a ratio of two sheet values,
 * to the user's own message, or to the Domain Expert's prose. Deterministic, no model call.
 * Anything else is flagged `warn`.
 */
import type { FactSheet } from './fact-sheet';

export interface FactCheckIssue {
  value: number;
  severity: 'warn';
}

/** Text that holds digits but no claims: links, arXiv ids, N=1,234 sample notes, ISO dates. */
const STRIPPED_PATTERNS: RegExp[] = [
  /\[[^\]]*\]\([^)]*\)/g, // markdown links
  /https?:\/\/\S+/g,
  /\barXiv:\s*\d{4}\.\d{4,5}(v\d+)?/gi,
  /\b[Nn]\s*=\s*[\d,]+/g,
  /\b\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?\b/g,
];

const NUMBER = /(?<![\w.])[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|(?<![\w.])[-−]?\d+(?:\.\d+)?%?/g;

export interface NumberToken {
  value: number;
  isInteger: boolean;
  isPercent: boolean;
}

export function extractNumbers(text: string): NumberToken[] {
  let cleaned = text;
  for (const pattern of STRIPPED_PATTERNS) cleaned = cleaned.replace(pattern, ' ');
  const tokens: NumberToken[] = [];
  for (const match of cleaned.matchAll(NUMBER)) {
    const raw = match[0].replace('−', '-');
    const isPercent = raw.endsWith('%');
    const digits = raw.replace(/[,%]/g, '');
    tokens.push({ value: Number(digits), isInteger: !digits.includes('.'), isPercent });
  }
  return tokens;
}

/** Numbers the fact-check never flags: list indices and small counts, and publication years. */
function isExempt(token: NumberToken): boolean {
  if (token.isInteger && !token.isPercent && Math.abs(token.value) < 100) return true;
  return token.isInteger && !token.isPercent && token.value >= 1900 && token.value <= 2100;
}

export function withinTolerance(value: number, reference: number): boolean {
  const tolerance = Math.max(0.02 * Math.abs(reference), 0.05);
  return Math.abs(value - reference) <= tolerance || Math.abs(value - Math.abs(reference)) <= tolerance;
}

function referenceValues(sheet: FactSheet, userMessage: string, expertProse: string): number[] {
  const values = Object.values(sheet);
  const ratios: number[] = [];
  for (const a of values) for (const b of values) if (b !== 0 && a !== b) ratios.push(a / b);
  const echoed = [...extractNumbers(userMessage), ...extractNumbers(expertProse)].map((t) => t.value);
  return [...values, ...ratios, ...echoed];
}

export function factCheckReply(
  reply: string,
  sheet: FactSheet,
  userMessage: string,
  expertProse = '',
): FactCheckIssue[] {
  const references = referenceValues(sheet, userMessage, expertProse);
  const issues: FactCheckIssue[] = [];
  for (const token of extractNumbers(reply)) {
    if (isExempt(token)) continue;
    // "7.3 %" may be a sheet fraction 0.073 rendered as a percentage.
    const candidates = token.isPercent ? [token.value, token.value / 100] : [token.value];
    const traced = candidates.some((v) => references.some((r) => withinTolerance(v, r)));
    if (!traced) issues.push({ value: token.value, severity: 'warn' });
  }
  return issues;
}
