/**
 * The privacy guard on every query a network tool sends out (PubMed, Data Commons): a query may carry a
 * topic, never what Amy remembers about the user, the user's own words, their data values or who they are
 * (ARCHITECTURE.md, invariant 10). A refusal names the rule, never the text that broke it, because the
 * refusal is shown to the model and may be logged.
 *
 * The rules, on text normalised for Unicode form, accents and case:
 * - memory_text: a run of 4 or more consecutive words of a memory entry (light stemming, so "sleeps" and
 *   "sleep" match), or, for an entry of 3 or more content words, all of them in any order (a reordered or
 *   lightly reworded entry). Entries of 1 or 2 content words are topics ("vegetarian diet") and pass.
 * - user_message: 7 or more consecutive words of a user message, or the whole of a message of 5 or 6
 *   words. Shorter messages read like a topic ("LDL and sleep").
 * - user_value: a number in the query (digits, or spelled out: "fifty-eight", "nineteen eighty four",
 *   "three point three six") that equals one of the user's values as written, that is the value rounds to
 *   it at the query's precision (57.6 → "58", 3.36 → "3.4"). Not compared:
 *     - integers 0 to 10: "type 2 diabetes", "omega 3", "zone 2" are topics, and such a number tells an
 *       outsider next to nothing;
 *     - a year in a publication date range ("since 2015", "2015-2024") is compared with the user's
 *       year-like salient values (a birth year) only, not with every row (a day of 2,019 steps);
 *     - a round number (a multiple of 5 below 1000, of 500 above) against row values only: thresholds the
 *       literature uses ("150 minutes", "10000 steps", "over 65") would otherwise almost always equal one
 *       of a few hundred daily values. Profile and lab values, anchors and numbers in memory entries are
 *       salient: they are compared round or not.
 *   Numbers in memory entries count as salient values, numbers in the user's messages as row values.
 * - user_identifier: an identifier (id, name, email) as a whole, blanks and punctuation ignored, or any
 *   alphabetic part of 3 letters or more of a name or an email's local part as a word of the query.
 * - not_a_topic: more than 32 words or 256 characters; a topic is a few keywords.
 *
 * Known limits: a value converted to another unit (LDL 3.36 mmol/L as 130 mg/dL) passes unless the caller
 * passes both units; so do digits split apart ("5 8"), mixed forms ("fifty 8"), arithmetic ("sixty minus
 * two"), other languages' number words, and a paraphrase that changes more than a word or two of a memory
 * entry. A name that is also an ordinary word ("Will", "May") refuses queries using that word.
 */

export interface UserValue {
  value: number;
  /**
   * profile and lab values (birth year, weight, LDL) and figures computed from the rows (a mean resting
   * heart rate) are salient; row is each value of the daily rows and workouts, of which there are hundreds.
   */
  kind: 'salient' | 'row';
}

export interface OutgoingQueryGuardInput {
  query: string;
  memoryTexts: readonly string[];
  userMessages: readonly string[];
  userValues: readonly UserValue[];
  /** The user's id, name and email, and anything else that names them. */
  userIdentifiers: readonly string[];
}

export type OutgoingQueryRefusal = 'not_a_topic' | 'user_identifier' | 'memory_text' | 'user_message' | 'user_value';

export type OutgoingQueryVerdict =
  { allowed: true } | { allowed: false; reasons: OutgoingQueryRefusal[]; message: string };

const REFUSAL_MESSAGES: Record<OutgoingQueryRefusal, string> = {
  not_a_topic: 'the query is too long for a topic',
  user_identifier: 'it contains something that identifies the user',
  memory_text: 'it repeats what Amy remembers about the user',
  user_message: "it repeats the user's message",
  user_value: "it contains a number from the user's own data",
};

const MAX_QUERY_WORDS = 32;
const MAX_QUERY_CHARS = 256;
const MEMORY_RUN_WORDS = 4;
const MEMORY_WHOLE_ENTRY_MIN_CONTENT_WORDS = 3;
const MESSAGE_RUN_WORDS = 7;
const MESSAGE_WHOLE_MIN_WORDS = 5;
const LARGEST_EXEMPT_INTEGER = 10;

/** NFKC (full-width digits become digits), accents off, lower case. */
const normalise = (text: string) => text.normalize('NFKC').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** A number with its decimal point or thousands commas, or a word (letters and digits, an apostrophe's s). */
const TOKEN = /\p{N}+(?:[.,]\p{N}+)*|[\p{L}\p{N}]+(?:['’]\p{L}+)?/gu;

const tokens = (text: string): string[] => normalise(text).match(TOKEN) ?? [];

/** Crude, but applied alike to both sides, so "sleeps", "sleeping" and "sleep" meet. */
function stem(word: string): string {
  const w = word.replace(/['’]s$/, '');
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 4 && w.endsWith('es')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

const STOPWORDS = new Set(
  (
    'a an the and or but of in on at to for with by from into about as than then so if is are was were be been ' +
    'being am i me my mine we us our you your he him his she her they them their it its this that these those ' +
    'has have had do does did not no very really usually often also just after before during when while user amy'
  ).split(' '),
);

const contentStems = (words: string[]) => words.filter((w) => !STOPWORDS.has(w)).map(stem);

/** Whether `needle` occurs as consecutive items of `haystack`. */
function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false;
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Whether any `length` consecutive items of `source` occur consecutively in `target`. */
function sharesRun(target: readonly string[], source: readonly string[], length: number): boolean {
  for (let i = 0; i + length <= source.length; i++) {
    if (containsRun(target, source.slice(i, i + length))) return true;
  }
  return false;
}

function repeatsMemory(queryWords: string[], memoryTexts: readonly string[]): boolean {
  const queryStems = queryWords.map(stem);
  const queryContent = new Set(contentStems(queryWords));
  return memoryTexts.some((text) => {
    const words = tokens(text);
    if (sharesRun(queryStems, words.map(stem), MEMORY_RUN_WORDS)) return true;
    const content = new Set(contentStems(words));
    return content.size >= MEMORY_WHOLE_ENTRY_MIN_CONTENT_WORDS && [...content].every((s) => queryContent.has(s));
  });
}

function repeatsMessage(queryWords: string[], userMessages: readonly string[]): boolean {
  return userMessages.some((message) => {
    const words = tokens(message);
    if (words.length < MESSAGE_WHOLE_MIN_WORDS) return false;
    return sharesRun(queryWords, words, Math.min(MESSAGE_RUN_WORDS, words.length));
  });
}

function namesUser(query: string, queryWords: string[], identifiers: readonly string[]): boolean {
  const compact = (text: string) => normalise(text).replace(/[^\p{L}\p{N}]/gu, '');
  const compactQuery = compact(query);
  const words = new Set(queryWords);
  return identifiers.some((identifier) => {
    const whole = compact(identifier);
    // Short ids as a bare substring would match inside ordinary words.
    if (whole.length >= 4 && compactQuery.includes(whole)) return true;
    const named = normalise(identifier).split('@')[0];
    return named.split(/[^\p{L}\p{N}]+/u).some((part) => part.length >= 3 && /^\p{L}+$/u.test(part) && words.has(part));
  });
}

// --- numbers ---------------------------------------------------------------------------------------------

interface QueryNumber {
  value: number;
  /** Digits written after the decimal point: the precision a user value is rounded to before comparing. */
  decimals: number;
  /** Written as an integer, 1900 to 2100, where a publication date range would put it. */
  inDateRange: boolean;
}

const SMALL =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(
    ' ',
  );
const TENS = 'twenty thirty forty fifty sixty seventy eighty ninety'.split(' ');
const NUMBER_WORDS = new Set([...SMALL, ...TENS, 'hundred', 'thousand', 'point', 'and']);

/** "fifty eight" → 58, "nineteen eighty four" → 1984, "five eight" → 58. */
function spelledValues(words: string[]): Array<{ value: number; decimals: number }> {
  const pointAt = words.indexOf('point');
  const whole = (pointAt < 0 ? words : words.slice(0, pointAt)).filter((w) => w !== 'and');
  const fraction = pointAt < 0 ? [] : words.slice(pointAt + 1).filter((w) => w !== 'and');
  if (fraction.some((w) => SMALL.indexOf(w) < 0 || SMALL.indexOf(w) > 9)) return [];
  const fractionDigits = fraction.map((w) => SMALL.indexOf(w)).join('');
  const withFraction = (n: number) => ({
    value: fractionDigits === '' ? n : Number(`${n}.${fractionDigits}`),
    decimals: fractionDigits.length,
  });

  const readings: number[] = [];
  // A cardinal: "one hundred thirty one", "two thousand fifteen". Two units in a row ("nineteen eighty") are not one.
  let total = 0;
  let current = 0;
  let valid = whole.length > 0;
  let previous: 'unit' | 'tens' | 'scale' | null = null;
  for (const word of whole) {
    const small = SMALL.indexOf(word);
    if (small >= 0) {
      if (previous === 'unit' || (previous === 'tens' && (small === 0 || small > 9))) valid = false;
      current += small;
      previous = 'unit';
    } else if (TENS.includes(word)) {
      if (previous === 'unit' || previous === 'tens') valid = false;
      current += 20 + 10 * TENS.indexOf(word);
      previous = 'tens';
    } else if (word === 'hundred') {
      current = (current || 1) * 100;
      previous = 'scale';
    } else {
      total += (current || 1) * 1000;
      current = 0;
      previous = 'scale';
    }
  }
  if (valid) readings.push(total + current);
  // Pairs, as years are said: "nineteen eighty four", "twenty twenty".
  const groups: number[] = [];
  for (const word of whole) {
    const previous = groups.length - 1;
    if (TENS.includes(word)) groups.push(20 + 10 * TENS.indexOf(word));
    else if (
      SMALL.includes(word) &&
      SMALL.indexOf(word) < 10 &&
      previous >= 0 &&
      groups[previous] % 10 === 0 &&
      groups[previous] >= 20
    ) {
      groups[previous] += SMALL.indexOf(word);
    } else if (SMALL.includes(word)) groups.push(SMALL.indexOf(word));
    else return readings.map(withFraction);
  }
  if (!words.includes('and') && groups.length === 2 && groups[0] >= 10 && groups[1] >= 10)
    readings.push(groups[0] * 100 + groups[1]);
  // Digit by digit: "five eight".
  if (whole.length >= 2 && whole.every((w) => SMALL.indexOf(w) >= 0 && SMALL.indexOf(w) <= 9)) {
    readings.push(Number(whole.map((w) => SMALL.indexOf(w)).join('')));
  }
  return readings.map(withFraction);
}

const DATE_RANGE_WORDS = new Set([
  'since',
  'from',
  'after',
  'before',
  'until',
  'till',
  'between',
  'to',
  'through',
  'in',
  'and',
  'published',
  'during',
]);
const isYearLike = (n: number) => Number.isInteger(n) && n >= 1900 && n <= 2100;

function queryNumbers(words: string[]): QueryNumber[] {
  const numbers: QueryNumber[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (/^\p{N}/u.test(word)) {
      const [value, decimals] = /^\d{1,3}(?:,\d{3})+$/.test(word)
        ? [Number(word.replace(/,/g, '')), 0]
        : [Number(word.replace(',', '.')), (word.split(/[.,]/)[1] ?? '').length];
      if (!Number.isFinite(value)) continue;
      const neighbours = [words[i - 1], words[i + 1]].filter((w) => w !== undefined);
      const inDateRange =
        decimals === 0 &&
        isYearLike(value) &&
        neighbours.some((w) => DATE_RANGE_WORDS.has(w) || (/^\d{4}$/.test(w) && isYearLike(Number(w))));
      numbers.push({ value, decimals, inDateRange });
    } else if (NUMBER_WORDS.has(word) && word !== 'and' && word !== 'point') {
      let end = i;
      while (end + 1 < words.length && NUMBER_WORDS.has(words[end + 1])) end++;
      for (const reading of spelledValues(words.slice(i, end + 1))) numbers.push({ ...reading, inDateRange: false });
      i = end;
    }
  }
  return numbers;
}

/** Thresholds the literature uses, exempt against row values only. */
const isRound = (n: number) => Number.isInteger(n) && (n < 1000 ? n % 5 === 0 : n % 500 === 0);

function matchesUserValue(number: QueryNumber, values: readonly UserValue[]): boolean {
  const { value, decimals, inDateRange } = number;
  if (decimals === 0 && Math.abs(value) <= LARGEST_EXEMPT_INTEGER) return false;
  const halfStep = 0.5 * 10 ** -decimals;
  return values.some((user) => {
    if (inDateRange && !(user.kind === 'salient' && isYearLike(user.value))) return false;
    if (user.kind === 'row' && decimals === 0 && isRound(value)) return false;
    return Math.abs(user.value - value) <= halfStep + 1e-9;
  });
}

/** Numbers quoted in memory entries are about the user, as salient as a profile value. */
function numbersIn(texts: readonly string[], kind: UserValue['kind']): UserValue[] {
  return texts.flatMap((text) => queryNumbers(tokens(text)).map(({ value }) => ({ value, kind })));
}

export function guardOutgoingQuery(input: OutgoingQueryGuardInput): OutgoingQueryVerdict {
  const words = tokens(input.query);
  const reasons: OutgoingQueryRefusal[] = [];
  if (words.length > MAX_QUERY_WORDS || input.query.length > MAX_QUERY_CHARS) reasons.push('not_a_topic');
  if (namesUser(input.query, words, input.userIdentifiers)) reasons.push('user_identifier');
  if (repeatsMemory(words, input.memoryTexts)) reasons.push('memory_text');
  if (repeatsMessage(words, input.userMessages)) reasons.push('user_message');
  const values = [
    ...input.userValues.filter((v) => Number.isFinite(v.value)),
    ...numbersIn(input.memoryTexts, 'salient'),
    ...numbersIn(input.userMessages, 'row'),
  ];
  if (queryNumbers(words).some((n) => matchesUserValue(n, values))) reasons.push('user_value');
  if (reasons.length === 0) return { allowed: true };
  return {
    allowed: false,
    reasons,
    message: `query not sent: ${reasons.map((r) => REFUSAL_MESSAGES[r]).join('; ')}. Search for the general topic in a few keywords, without anything about this user.`,
  };
}
