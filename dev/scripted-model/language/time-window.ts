/**
 * The time window a message names: days counted back from the last day of the user's data, or calendar
 * dates (since / until, MM-DD or YYYY-MM-DD) for a date, a month, a year or the year so far (see
 * `SpecWindow` in understanding.ts for the conventions). Returns null when the message names none.
 */
import type { SpecWindow } from './understanding';

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  couple: 2,
  three: 3,
  few: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fourteen: 14,
  thirty: 30,
  sixty: 60,
  ninety: 90,
};

const UNIT_DAYS: Record<string, number> = {
  day: 1,
  days: 1,
  night: 1,
  nights: 1,
  week: 7,
  weeks: 7,
  fortnight: 14,
  fortnights: 14,
  month: 30,
  months: 30,
  quarter: 90,
  year: 365,
  years: 365,
};

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH_ABBREVIATIONS: Record<string, number> = Object.fromEntries(
  MONTHS.flatMap((name, i) => [
    [name, i + 1],
    [name.slice(0, 3), i + 1],
  ]).concat([['sept', 9]]),
);

/** A month's name or abbreviation, as a regular expression group. */
const MONTH = `(${Object.keys(MONTH_ABBREVIATIONS).join('|')})`;
/** A year a question names: four digits from 1900 to 2099 ("in 2025", "December 2025"). */
const YEAR = '((?:19|20)\\d{2})';
/** "may" and "march" are verbs too ("this may sound odd"): only an unambiguous word before them makes them months. */
const VERB_MONTHS = new Set(['may', 'mar', 'march']);

/** A year named as a window ("in 2025", "December 2025", "since March 2025"), not a value the user states. */
export const NAMED_YEAR = new RegExp(
  ` (?:in|during|throughout|through|over|for|of|since|${MONTH.slice(1, -1)}) (?:the year )?(?:19|20)\\d{2} `,
  'g',
);

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

const count = (word: string | undefined): number | null => {
  if (word === undefined || word === '') return 1;
  if (/^\d+$/.test(word)) return Number(word);
  return NUMBER_WORDS[word] ?? null;
};

const pad = (n: number) => String(n).padStart(2, '0');

/** A calendar date of a window: `MM-DD`, or `YYYY-MM-DD` when the year is named. */
const date = (month: number, day: number, year?: string) => `${year ? `${year}-` : ''}${pad(month)}-${pad(day)}`;

/** A whole calendar month: its first and last day, February's 29th only in a leap year named as such. */
function monthWindow(month: number, year?: string): SpecWindow {
  const last = month === 2 && year !== undefined && isLeapYear(Number(year)) ? 29 : MONTH_DAYS[month - 1];
  return { since: date(month, 1, year), until: date(month, last, year) };
}

/**
 * A calendar window other than "since": a month ("in October", "during march", "last September", "in
 * December 2025"), a year ("in 2025"), or the year so far ("this year", "so far this year", "year to date").
 */
function calendarWindow(text: string): SpecWindow | null {
  // "from October to December", "between august and october 2025": the first day of one to the last of the other.
  const range = new RegExp(
    ` (?:from|between) ${MONTH}(?: ${YEAR})? (?:to|until|till|through|and) ${MONTH}(?: ${YEAR})? `,
  ).exec(text);
  if (range) {
    const [from, to] = [
      monthWindow(MONTH_ABBREVIATIONS[range[1]], range[2] ?? range[4]),
      monthWindow(MONTH_ABBREVIATIONS[range[3]], range[4]),
    ] as Array<{ since: string; until: string }>;
    return { since: from.since, until: to.until };
  }
  const withYear = new RegExp(` ${MONTH} (?:of )?${YEAR} `).exec(text);
  if (withYear) return monthWindow(MONTH_ABBREVIATIONS[withYear[1]], withYear[2]);
  // A month alone, or after "what about" / "and" in a follow-up ("and in November?", "what about March?").
  const alone = new RegExp(`^ (?:(?:and|what about|how about|and what about) )?${MONTH} $`).exec(text);
  if (alone) return monthWindow(MONTH_ABBREVIATIONS[alone[1]]);
  const months = new RegExp(
    ` (in|during|throughout|through|over|for|last|this|about|and|back in|in early|in late|in mid|the month of) ${MONTH} `,
    'g',
  );
  for (const match of text.matchAll(months)) {
    const [, before, name] = match;
    // "this may sound odd", "for march pace", "and may I ask": a verb or a word, not the month.
    if (
      VERB_MONTHS.has(name) &&
      !['in', 'during', 'throughout', 'last', 'about', 'back in', 'the month of'].includes(before)
    )
      continue;
    // "in March 3rd" is a day, not the month: left to a date window.
    if (/^ \d/.test(text.slice(match.index + match[0].length - 1))) continue;
    return monthWindow(MONTH_ABBREVIATIONS[name]);
  }
  const year = new RegExp(
    ` (?:in|during|throughout|through|over|for|of) (?:the year |all of |the whole of )?${YEAR} `,
  ).exec(text);
  if (year) return { since: `${year[1]}-01-01`, until: `${year[1]}-12-31` };
  if (/ (?:this|the current) year | year to date | ytd | so far in the year /.test(text)) return { since: '01-01' };
  return null;
}

/** "since March 1", "since 1 March", "since march", "since March 2025", "since 3/1": the day the window starts on. */
function sinceDate(text: string): SpecWindow | null {
  const match = new RegExp(
    ` since (?:the )?(?:(\\d{1,2})(?:st|nd|rd|th)? (?:of )?)?([a-z]+)(?: (\\d{1,2})(?:st|nd|rd|th)?)?(?: ${YEAR})? `,
  ).exec(text);
  if (match && MONTH_ABBREVIATIONS[match[2]] !== undefined) {
    const month = MONTH_ABBREVIATIONS[match[2]];
    const day = Number(match[1] ?? match[3] ?? 1);
    return { since: date(month, day, match[4]) };
  }
  const numeric = / since (\d{1,2})\/(\d{1,2}) /.exec(text);
  if (numeric) return { since: `${pad(Number(numeric[1]))}-${pad(Number(numeric[2]))}` };
  const startOf = new RegExp(` since (?:the )?(?:start|beginning|end) of ([a-z]+)(?: ${YEAR})? `).exec(text);
  if (startOf && MONTH_ABBREVIATIONS[startOf[1]] !== undefined)
    return { since: date(MONTH_ABBREVIATIONS[startOf[1]], 1, startOf[2]) };
  if (/ since (?:the )?(?:start|beginning) of (?:the |this )?year /.test(text) || / since january /.test(text)) {
    return { since: '01-01' };
  }
  return null;
}

/**
 * The window a normalised message names; null when it names none. A calendar window ("since March", "in
 * October", "this year") wins; of several counted in days, the longest ("last week's sleep … tonight" is the week).
 */
/** Words that name a recent period without its length: read as 30 days, the likeliest of the readings. */
export const VAGUE_WINDOW = / (?:lately|recently|recent|these days|nowadays|of late|this past while|the past while) /;

export function timeWindow(text: string): SpecWindow | null {
  const since = sinceDate(text) ?? calendarWindow(text);
  if (since) return since;

  // "the week before", "the month before that", "the previous month": the same length, one step back.
  const before = / (?:the )?(week|month|fortnight|year) (?:before|prior)(?: that| last| this)?? /.exec(text);
  const previousUnit = / (?:the )?(?:previous|prior|preceding) (week|month|fortnight|year) /.exec(text);
  const stepBack = before ?? previousUnit;
  if (stepBack) return { days: UNIT_DAYS[stepBack[1]], offset: UNIT_DAYS[stepBack[1]] };

  const candidates: SpecWindow[] = [];
  // "last 3 weeks", "past 90 days", "over the last couple of months", "in the previous 10 days".
  const span =
    / (?:last|past|previous|prior|recent|over|in|for|from|during|within|the) (?:the )?(?:last |past )?(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|thirty|sixty|ninety|couple|few) ?(?:of )?(days|weeks|months|years|nights|fortnights) /.exec(
      text,
    );
  const n = span ? count(span[1]) : null;
  if (span && n !== null) candidates.push({ days: n * UNIT_DAYS[span[2]] });
  const compact = / (\d+) ?(d|w|m|y) /.exec(text);
  if (compact)
    candidates.push({ days: Number(compact[1]) * { d: 1, w: 7, m: 30, y: 365 }[compact[2] as 'd' | 'w' | 'm' | 'y'] });

  if (/ (?:last|past|previous|this|the) (?:two|2) weeks | fortnight /.test(text)) candidates.push({ days: 14 });
  if (/ (?:last|past|previous|the last|the past) year /.test(text)) candidates.push({ days: 365 });
  if (/ (?:this|last|past|previous|the last|the past) quarter /.test(text)) candidates.push({ days: 90 });
  if (/ (?:this|last|past|previous|the last|the past) month /.test(text)) candidates.push({ days: 30 });
  if (/ (?:this|last|past|previous|the last|the past) week /.test(text)) candidates.push({ days: 7 });
  if (VAGUE_WINDOW.test(text)) candidates.push({ days: 30 });
  if (/ yesterday /.test(text)) candidates.push({ days: 1, offset: 1 });
  if (/ (?:last|past) night | tonight | this morning | today | overnight /.test(text)) candidates.push({ days: 1 });
  if (candidates.length === 0) return null;
  return candidates.reduce((longest, c) => (daysOf(c) > daysOf(longest) ? c : longest));
}

const daysOf = (window: SpecWindow) => ('days' in window ? (window.days ?? Infinity) : Infinity);
