/**
 * `amy ask` answering a turn's question, without a service: how the question reads on the terminal (options
 * numbered, the estimate, the default and the deadline, made terminal-safe), what each typed line answers, the
 * reader over a stream standing in for the terminal (end of input answers nothing; an abort closes it), and the
 * live view's line about what the turn went on with.
 */
import { PassThrough } from 'node:stream';
import type { InputRequest, TurnStreamEvent } from '@amy/sdk';
import { TurnView } from '../../cli/src/view/model';
import { answerFor, formatQuestion, promptFor, terminalQuestions } from '../../cli/src/watch/questions';

const CONFIRMATION: InputRequest = {
  request_id: 'inq_1',
  kind: 'confirmation',
  question: 'Look through \x1b[31mall\x1b[0m of your data?',
  options: [
    { id: 'scan', label: 'Yes, look through all my data' },
    { id: 'quick', label: 'No, a quick answer is enough' },
  ],
  free_text: false,
  default_option_id: 'quick',
  expires_at: '2026-11-23T10:15:00.000Z',
  estimate: { cost_usd: 0.042, duration_seconds: 75 },
};
const CLARIFICATION: InputRequest = {
  ...CONFIRMATION,
  request_id: 'inq_2',
  kind: 'clarification',
  question: 'Which do you mean?',
  free_text: true,
  estimate: undefined,
};

test('the question: options numbered, the default marked, the estimate, the deadline, no escape sequence', () => {
  const text = formatQuestion(CONFIRMATION, new Date('2026-11-23T10:00:00.000Z'));
  expect(text.split('\n')).toEqual([
    '? Look through all of your data?',
    '  1. Yes, look through all my data',
    '  2. No, a quick answer is enough (default)',
    '  Estimate: about $0.04 and 75 s.',
    expect.stringMatching(
      /^ {2}Without an answer by .+ \(in 15 min\), the turn goes on with "No, a quick answer is enough"\.$/,
    ),
    '',
  ]);
  expect(text).not.toContain('\x1b');
  expect(promptFor(CONFIRMATION)).toBe('Choose 1-2 (Enter for the default): ');
  expect(promptFor(CLARIFICATION)).toBe('Choose 1-2, or type your own answer (Enter for the default): ');
});

test.each([
  ['1', { request_id: 'inq_1', option_id: 'scan' }],
  [' 2 ', { request_id: 'inq_1', option_id: 'quick' }],
  ['', { request_id: 'inq_1', option_id: 'quick' }],
  ['3', null],
  ['yes', null],
])('a confirmation takes %j as %j', (line, answer) => {
  expect(answerFor(CONFIRMATION, line)).toEqual(answer);
});

test('a question that takes text takes words, and a number beyond the options as words', () => {
  expect(answerFor(CLARIFICATION, 'my sleep')).toEqual({ request_id: 'inq_2', text: 'my sleep' });
  expect(answerFor(CLARIFICATION, '7')).toEqual({ request_id: 'inq_2', text: '7' });
  expect(answerFor(CLARIFICATION, '1')).toEqual({ request_id: 'inq_2', option_id: 'scan' });
});

function terminal() {
  const stdin = new PassThrough();
  let written = '';
  return { stdin, out: { write: (chunk: string) => (written += chunk) }, written: () => written };
}

test('the reader asks again after a line that is no choice, and resolves with the answer', async () => {
  const io = terminal();
  const answer = terminalQuestions(io)(CONFIRMATION, new AbortController().signal);
  io.stdin.write('maybe\n');
  io.stdin.write('1\n');
  await expect(answer).resolves.toEqual({ request_id: 'inq_1', option_id: 'scan' });
  expect(io.written()).toContain('Not one of the choices. Choose 1-2');
});

test('end of input answers nothing, and later questions are not asked', async () => {
  const io = terminal();
  const ask = terminalQuestions(io);
  const answer = ask(CONFIRMATION, new AbortController().signal);
  io.stdin.end();
  await expect(answer).resolves.toBeNull();
  await expect(ask(CLARIFICATION, new AbortController().signal)).resolves.toBeNull();
});

test('an abort (the turn went on, or the watch stopped) closes the question without an answer', async () => {
  const io = terminal();
  const abort = new AbortController();
  const answer = terminalQuestions(io)(CONFIRMATION, abort.signal);
  abort.abort();
  await expect(answer).resolves.toBeNull();
});

test('the live view says what the turn went on with: the answer, or the default at the deadline', () => {
  const view = new TurnView();
  const transcripts = { text: () => '' };
  const asked = { id: 1, type: 'turn.input_required', turn_id: 't', ...CONFIRMATION } as TurnStreamEvent;
  const received = (source: 'user' | 'expiry', option_id: string) =>
    ({
      id: 2,
      type: 'turn.input_received',
      turn_id: 't',
      request_id: 'inq_1',
      option_id,
      text: null,
      source,
      at: '',
    }) as TurnStreamEvent;
  expect(view.apply(asked, transcripts)).toEqual([]);
  expect(view.apply(received('user', 'scan'), transcripts)).toEqual([
    { kind: 'notice', text: 'Answered "Yes, look through all my data": the turn goes on.' },
  ]);
  expect(view.apply(received('expiry', 'quick'), transcripts)).toEqual([
    { kind: 'notice', text: 'No answer in time: the turn went on with the default, "No, a quick answer is enough".' },
  ]);
});
