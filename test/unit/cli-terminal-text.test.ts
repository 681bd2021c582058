/**
 * The CLI's one sanitiser for what the service sends (cli/src/terminal-text.ts): every escape sequence
 * and control character a terminal would act on goes, in its 7-bit and 8-bit forms; newlines and the
 * text around them stay. Its JSON form keeps the value exactly. The CLI's print paths end to end are in
 * test/e2e/cli-terminal-safety.test.ts.
 */
import { terminalJson, terminalLine, terminalSafe, terminalText } from '../../cli/src/terminal-text';

/** Anything a terminal acts on: C0 but the newline, DEL, C1, bidi embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex -- the control characters are what this finds
const ACTIVE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

test.each([
  ['OSC window title, BEL-terminated', 'a\u001b]0;pwned\u0007b', 'ab'],
  ['OSC 8 hyperlink, ST-terminated', '\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\', 'click'],
  ['OSC 52 clipboard write', 'x\u001b]52;c;cm0gLXJmIH4=\u0007y', 'xy'],
  ['CSI clear screen', 'before\u001b[2Jafter', 'beforeafter'],
  ['CSI cursor home and colour', '\u001b[H\u001b[1;31mred\u001b[0m', 'red'],
  ['8-bit CSI', 'a\u009b31mb', 'ab'],
  ['8-bit OSC with 8-bit ST', 'a\u009d0;title\u009cb', 'ab'],
  ['DCS string', 'a\u001bPq#0;2;0;0;0\u001b\\b', 'ab'],
  ['ESC c (full reset) and ESC 7', 'a\u001bcb\u001b7c', 'abc'],
  ['a lone ESC at the end', 'abc\u001b', 'abc'],
  ['an unterminated OSC: its introducer goes, its text shows', 'a\u001b]0;pwned', 'a0;pwned'],
  ['BEL, backspace, NUL, DEL, vertical tab', 'a\u0007b\u0008c\u0000d\u007fe\u000bf', 'abcdef'],
  ['carriage returns become newlines', 'one\r\ntwo\rthree', 'one\ntwo\nthree'],
  ['tabs become two spaces', 'a\tb', 'a  b'],
  ['bidi override and isolate', 'abc\u202Etxt.exe\u202C \u2067x\u2069', 'abctxt.exe x'],
  ['plain text with newlines, unicode and a ✓', 'Hello ✓\nnext · line', 'Hello ✓\nnext · line'],
])('terminalText: %s', (_what, input, expected) => {
  const out = terminalText(input);
  expect(out).toBe(expected);
  expect(out).not.toMatch(ACTIVE);
});

test('terminalLine makes one line, and is as safe', () => {
  expect(terminalLine('first\n  second\r\nthird\u001b[2J')).toBe('first second third');
});

test('terminalSafe cleans every string of a value, keys included, and leaves numbers and nulls alone', () => {
  const event = {
    id: 3,
    type: 'turn.completed',
    result: {
      answer: 'ok\u001b]0;x\u0007',
      fact_sheet: [{ claim: 'c\u009b2J', unit: 'bpm\u001b[31m', window: null, n: 5 }],
      agents_used: ['data_science\u202e'],
    },
    ['k\u001b[1m']: true,
  };
  expect(terminalSafe(event)).toEqual({
    id: 3,
    type: 'turn.completed',
    result: {
      answer: 'ok',
      fact_sheet: [{ claim: 'c', unit: 'bpm', window: null, n: 5 }],
      agents_used: ['data_science'],
    },
    k: true,
  });
});

test('terminalJson: the same value, with nothing a terminal acts on written raw', () => {
  const value = { text: 'a\u001b]0;pwned\u0007\u009b31m\u007f\u202e\u2028z', n: 1 };
  const line = terminalJson(value);
  expect(line).not.toMatch(ACTIVE);
  expect(line).not.toMatch(/[\u2028\u2029]/);
  expect(JSON.parse(line)).toEqual(value);
  expect(line).toContain('\\u009b31m');
});
