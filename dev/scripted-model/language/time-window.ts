/**
 * The time window a message names, as days counted back from the last day of the user's data (see
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

const count = (word: string | undefined): number | null => {
  if (word === undefined || word === '') return 1;
  if (/^\d+$/.test(word)) return Number(word);
  return NUMBER_WORDS[word] ?? null;
};

const pad = (n: number) => String(n).padStart(2, '0');

/** "since March 1", "since 1 March", "since march", "since 3/1": the month-day the window starts on. */
function sinceDate(text: string): SpecWindow | null {
  const match = / since (?:the )?(?:(\d{1,2})(?:st|nd|rd|th)? (?:of )?)?([a-z]+)(?: (\d{1,2})(?:st|nd|rd|th)?)? /.exec(
    text,
  );
  if (match && MONTH_ABBREVIATIONS[match[2]] !== undefined) {
    const month = MONTH_ABBREVIATIONS[match[2]];
    const day = Number(match[1] ?? match[3] ?? 1);
    return { since: `${pad(month)}-${pad(day)}` };
  }
  const numeric = / since (\d{1,2})\/(\d{1,2}) /.exec(text);
  if (numeric) return { since: `${pad(Number(numeric[1]))}-${pad(Number(numeric[2]))}` };
  const startOf = / since (?:the )?(?:start|beginning|end) of ([a-z]+) /.exec(text);
  if (startOf && MONTH_ABBREVIATIONS[startOf[1]] !== undefined)
    return { since: `${pad(MONTH_ABBREVIATIONS[startOf[1]])}-01` };
  if (/ since (?:the )?(?:start|beginning) of (?:the |this )?year /.test(text) || / since january /.test(text)) {
    return { since: '01-01' };
  }
  return null;
}

/** The window a normalised message names; null when it names none. Of several, the longest ("last week's sleep … tonight" is the week). */
export function timeWindow(text: string): SpecWindow | null {
  const since = sinceDate(text);
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
  if (/ (?:this|last|past|previous|the last|the past) year | this year | in \d{4} /.test(text))
    candidates.push({ days: 365 });
  if (/ (?:this|last|past|previous|the last|the past) quarter /.test(text)) candidates.push({ days: 90 });
  if (/ (?:this|last|past|previous|the last|the past) month /.test(text)) candidates.push({ days: 30 });
  if (/ (?:this|last|past|previous|the last|the past) week /.test(text)) candidates.push({ days: 7 });
  if (/ (?:lately|recently|recent|these days|nowadays|of late|this past while|the past while) /.test(text))
    candidates.push({ days: 30 });
  if (/ yesterday /.test(text)) candidates.push({ days: 1, offset: 1 });
  if (/ (?:last|past) night | tonight | this morning | today | overnight /.test(text)) candidates.push({ days: 1 });
  if (candidates.length === 0) return null;
  return candidates.reduce((longest, c) => (daysOf(c) > daysOf(longest) ? c : longest));
}

const daysOf = (window: SpecWindow) => ('days' in window ? (window.days ?? Infinity) : Infinity);
