/**
 * The numbers of a text, as the fact-check reads them: each with its unit or metric word, and whether
 * it is plainly not a quantity (a list index, a year, the day of a date). Digits inside links, ids,
 * citations and ISO dates are not numbers here. Pure and deterministic.
 */

/**
 * The words after a number that make it a measured quantity, so it is checked whatever its size.
 * Matched case-insensitively, as a whole word, with at most one space between number and word; the
 * longer wins ("mg/dL" over "mg", "of deep sleep" over "of sleep"). Single letters that are also
 * words or other units ("s", "m") are left out; "h" is in, since nothing else reads "7.5 h".
 */
const UNIT_WORDS = [
  // heart, breathing, HRV
  'bpm',
  'beats per minute',
  'beats',
  'brpm',
  'breaths per minute',
  'breaths',
  'ms',
  'milliseconds',
  // time and counts of days
  'seconds',
  'second',
  'secs',
  'sec',
  'minutes',
  'minute',
  'mins',
  'min',
  'hours',
  'hour',
  'hrs',
  'hr',
  'h',
  'nights',
  'night',
  'days',
  'day',
  'weeks',
  'week',
  'months',
  'month',
  'years',
  'year',
  'times',
  // sleep amounts written without a time unit ("7.5 of sleep" never reads well, but a model writes it)
  'of sleep',
  'of deep sleep',
  'of rem sleep',
  'of light sleep',
  // activity
  'steps',
  'step',
  'workouts',
  'workout',
  'sessions',
  'session',
  'floors',
  'km',
  'kilometres',
  'kilometers',
  'miles',
  'mi',
  'kcal',
  'calories',
  'cal',
  // scores and shares
  'points',
  'point',
  'pts',
  '%',
  'percent',
  'per cent',
  // body and labs
  'kg',
  'lb',
  'lbs',
  'pounds',
  'g',
  'mg',
  'mcg',
  'µg',
  'mg/dl',
  'g/dl',
  'mmol/l',
  'µmol/l',
  'umol/l',
  'nmol/l',
  'ng/ml',
  'pg/ml',
  'miu/l',
  'iu/l',
  'u/l',
  'iu',
  '°c',
  '°f',
];

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const UNIT = new RegExp(
  `^[ \\u00a0\\u202f]?(${[...UNIT_WORDS]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|')})(?![\\p{L}\\d])`,
  'iu',
);
const PERCENT_WORDS = new Set(['%', 'percent', 'per cent']);

/** Text that holds digits but no claims: links, arXiv ids, DOIs, PMIDs, citation marks, N=… notes, ISO dates, ids. */
const STRIPPED_PATTERNS: RegExp[] = [
  /\[[^\]]*\]\([^)]*\)/g, // markdown links
  /https?:\/\/\S+/g,
  /\barXiv:\s*\d{4}\.\d{4,5}(v\d+)?/gi,
  /\b(?:doi:\s*)?10\.\d{4,9}\/\S+/gi,
  /\bPMID:?\s*\d+/gi,
  /\[\d+(?:\s*[,–-]\s*\d+)*\]/g, // citation marks: [1], [2, 3], [4–6]
  /\b[Nn]\s*=\s*[\d,]+/g,
  /\b\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?\b/g,
  /\b\d{1,2}\/\d{1,2}\/\d{2,4}\b/g, // 6/1/2026
  /\b[A-Za-z][A-Za-z0-9]*[-_]\d[\w-]*/g, // ids: ds-001, dsr-002, COVID-19
  /#\d+\b/g,
];

const NUMBER = /(?<![\w.])[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|(?<![\w.])[-−]?\d+(?:\.\d+)?%?/g;

const MONTHS =
  '(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)';
/** "1 June", "1st of June", "June 1": the day of a written date. */
const MONTH_AFTER = new RegExp(`^(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTHS}\\b`);
const MONTH_BEFORE = new RegExp(`\\b${MONTHS}\\.?\\s+(?:the\\s+)?$`);
const ORDINAL_SUFFIX = /^(?:st|nd|rd|th)\b/i;
/** Before a line's list number: nothing but indentation, bullets, quote marks or heading hashes. */
const LINE_PREFIX = /(?:^|\n)[ \t>#*•-]*$/;

/** Why a number is not a quantity; never set on a number with a unit. */
type NonQuantity = 'list_index' | 'year' | 'date';

export interface NumberToken {
  value: number;
  isInteger: boolean;
  isPercent: boolean;
  /** The unit or metric word right after it, as written ("bpm", "%", "of deep sleep"), or null. */
  unit: string | null;
  notAQuantity: NonQuantity | null;
  /** Where the number and its unit are in the text: [start, end). */
  start: number;
  end: number;
  /** The number and its unit as written ("58 bpm"). */
  text: string;
}

/** A small integer standing as a list index: "1. Sleep" at a line start, "(2)", or "2) steps" in a run of items. */
function isListIndex(text: string, start: number, end: number, value: number): boolean {
  const before = text.slice(0, start);
  const after = text.slice(end);
  if (LINE_PREFIX.test(before) && /^[.)](?:\s|$)/.test(after)) return true;
  if (value > 20) return false;
  if (before.endsWith('(') && after.startsWith(')')) return true;
  return /(?:^|[\s:;,])$/.test(before) && /^\)(?:\s|$)/.test(after);
}

function nonQuantity(text: string, token: Omit<NumberToken, 'notAQuantity' | 'text'>): NonQuantity | null {
  if (token.unit !== null || !token.isInteger || token.isPercent) return null;
  const { start, end, value } = token;
  if (value >= 0 && value < 1000 && isListIndex(text, start, end, value)) return 'list_index';
  const after = text.slice(end);
  if (value >= 1 && value <= 31 && (MONTH_AFTER.test(after) || MONTH_BEFORE.test(text.slice(0, start)))) return 'date';
  // "the 3rd", "your 2nd-best night": a rank or the day of a date, not an amount.
  if (ORDINAL_SUFFIX.test(after)) return 'date';
  if (value >= 1900 && value <= 2100) return 'year';
  return null;
}

/** Every number of `text` (digits inside links, ids, ISO dates and the like are not numbers here). */
export function extractNumbers(text: string): NumberToken[] {
  let cleaned = text;
  // Blanked, not cut: positions in `cleaned` are positions in `text`.
  for (const pattern of STRIPPED_PATTERNS) cleaned = cleaned.replace(pattern, (m) => ' '.repeat(m.length));
  const tokens: NumberToken[] = [];
  for (const match of cleaned.matchAll(NUMBER)) {
    const raw = match[0].replace('−', '-');
    const start = match.index;
    let end = start + match[0].length;
    const digits = raw.replace(/[,%]/g, '');
    let unit: string | null = raw.endsWith('%') ? '%' : null;
    if (unit === null) {
      const word = UNIT.exec(cleaned.slice(end));
      if (word) {
        unit = word[1];
        end += word[0].length;
      }
    }
    const base = {
      value: Number(digits),
      isInteger: !digits.includes('.'),
      isPercent: unit !== null && PERCENT_WORDS.has(unit.toLowerCase()),
      unit,
      start,
      end,
    };
    tokens.push({ ...base, notAQuantity: nonQuantity(cleaned, base), text: text.slice(start, end) });
  }
  return tokens;
}
