/**
 * The numbers in an answer that a fact-sheet value stands behind, found the way the server's
 * fact-check reads them (checks/fact-check.ts, checks/numbers.ts): the same number pattern, the same
 * text that holds digits but no claims (links, arXiv ids, N=… notes, ISO dates), and the same
 * tolerance, which the SDK exports from the API's contracts. A percentage may be a sheet fraction:
 * "7.3 %" matches 0.073.
 */
import { withinTolerance } from './amy-sdk.js';

const NOT_CLAIMS = [
  /\[[^\]]*\]\([^)]*\)/g,
  /https?:\/\/\S+/g,
  /\barXiv:\s*\d{4}\.\d{4,5}(v\d+)?/gi,
  /\b[Nn]\s*=\s*[\d,]+/g,
  /\b\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?\b/g,
];

const NUMBER = /(?<![\w.])[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|(?<![\w.])[-−]?\d+(?:\.\d+)?%?/g;

function claimFreeRanges(text) {
  const ranges = [];
  for (const pattern of NOT_CLAIMS) {
    for (const match of text.matchAll(pattern)) ranges.push([match.index, match.index + match[0].length]);
  }
  return ranges;
}

/** The fact closest to `token`'s value within tolerance, or null. */
function factFor(token, factSheet) {
  const raw = token.replace('−', '-');
  const value = Number(raw.replace(/[,%]/g, ''));
  const candidates = raw.endsWith('%') ? [value, value / 100] : [value];
  let best = null;
  let bestGap = Infinity;
  for (const fact of factSheet) {
    for (const candidate of candidates) {
      const gap = Math.abs(candidate - fact.value);
      if (withinTolerance(candidate, fact.value) && gap < bestGap) [best, bestGap] = [fact, gap];
    }
  }
  return best;
}

/** `[{ start, end, fact }]`, in order, for each number of `text` that matches a fact-sheet entry. */
export function factSheetNumbers(text, factSheet) {
  const skipped = claimFreeRanges(text);
  const found = [];
  for (const match of text.matchAll(NUMBER)) {
    const start = match.index;
    const end = start + match[0].length;
    if (skipped.some(([from, to]) => start < to && end > from)) continue;
    const fact = factFor(match[0], factSheet);
    if (fact) found.push({ start, end, fact });
  }
  return found;
}
