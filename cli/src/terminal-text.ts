/**
 * The one gate between what the service sends and the user's terminal. Every string the CLI prints
 * that it did not write itself (model text and its streamed deltas, answers, claims, fact-sheet units
 * and windows, memory text, error messages, ids) goes through here, so none of it can drive the
 * terminal: no escape sequence (CSI, OSC, DCS and the rest, in their 7-bit and 8-bit forms) moves the
 * cursor, clears the screen, sets the window title, writes to the clipboard or makes a link; no
 * control character rings, backspaces over or returns to the start of what was printed; and no bidi
 * override reorders a line so that it reads other than it is.
 *
 * - `terminalText` keeps newlines (and turns tabs into spaces), for text laid out on several lines;
 * - `terminalLine` makes one line of it, for a field inside a line;
 * - `terminalJson` is `JSON.stringify` for output that scripts read: the value stays exactly the same,
 *   but the characters JSON would leave raw (DEL, C1 controls, bidi controls, line separators) are
 *   written as `\uXXXX` escapes.
 */
/* eslint-disable no-control-regex -- finding terminal control codes is what these expressions are for */

/** A whole escape sequence: the CLI's renderer alone writes those. */
const ESCAPE_SEQUENCE = new RegExp(
  [
    // Control strings (OSC, DCS, SOS, PM, APC), up to their terminator (BEL or ST, 7- or 8-bit).
    String.raw`(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)`,
    // Control sequences (CSI): parameters, intermediates, a final byte.
    String.raw`(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]`,
    // Any other escape: ESC, intermediates, a final byte (ESC c resets the terminal).
    String.raw`\x1b[\x20-\x2f]*[\x30-\x7e]`,
  ].join('|'),
  'g',
);

/** What is left: C0 controls but the newline, DEL, C1 controls. */
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/g;

/** Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): they reorder what follows. */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/g;

export function terminalText(text: string): string {
  return text
    .replace(ESCAPE_SEQUENCE, '')
    .replace(/\r\n?/g, '\n')
    .replace(/\t/g, '  ')
    .replace(CONTROL, '')
    .replace(BIDI_CONTROL, '');
}

/** One line: newlines and the blanks around them become one space. */
export function terminalLine(text: string): string {
  return terminalText(text).replace(/\s*\n\s*/g, ' ');
}

/** A JSON value (an event, a Turn) with every string in it, keys included, through terminalText. */
export function terminalSafe<T>(value: T): T {
  if (typeof value === 'string') return terminalText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => terminalSafe(item)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [terminalText(key), terminalSafe(item)])) as T;
  }
  return value;
}

/** Characters `JSON.stringify` writes as they are that a terminal would act on. */
const RAW_IN_JSON = /[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
