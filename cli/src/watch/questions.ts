/**
 * A turn that asks back (`turn.input_required`) on a terminal: the question, its options numbered, the estimate
 * of a confirmation, the default and the deadline; then one line read from the terminal (a number, Enter alone
 * for the default, or text of the user's own when the question allows it). End of input answers nothing: the
 * question is left to expire and the turn goes on with its default at the deadline.
 *
 * The terminal stays in its ordinary line mode (readline without `terminal`), so Ctrl-C is still the process's
 * SIGINT that detaches the watch (./ctrl-c.ts); the watch aborts an open question then.
 */
import readline from 'node:readline';
import type { Amy, InputRequest, TurnInputAnswer } from '@amy/sdk';
import { describeError } from '../errors';
import { terminalLine } from '../terminal-text';
import type { TurnPresenter } from './presenter';

export interface QuestionIo {
  stdin: NodeJS.ReadableStream;
  /** Where the question and the prompt go (stderr, so that stdout stays the view or the NDJSON). */
  out: { write(chunk: string): unknown };
}

/** Asks one question; resolves with the answer, or null when none came (end of input, or `signal` aborted). */
export type AskQuestion = (request: InputRequest, signal: AbortSignal) => Promise<TurnInputAnswer | null>;

/** The question as the terminal shows it, options numbered from 1. */
export function formatQuestion(request: InputRequest, now: Date = new Date()): string {
  const defaultOption = request.options.find((option) => option.id === request.default_option_id);
  const lines = [`? ${terminalLine(request.question)}`];
  request.options.forEach((option, i) => {
    const isDefault = option.id === request.default_option_id ? ' (default)' : '';
    lines.push(`  ${i + 1}. ${terminalLine(option.label)}${isDefault}`);
  });
  if (request.estimate) {
    lines.push(
      `  Estimate: about $${request.estimate.cost_usd.toFixed(2)} and ${formatDuration(request.estimate.duration_seconds)}.`,
    );
  }
  const deadline = new Date(request.expires_at);
  if (!Number.isNaN(deadline.getTime())) {
    const left = Math.max(0, Math.round((deadline.getTime() - now.getTime()) / 1000));
    const fallback = defaultOption ? `"${terminalLine(defaultOption.label)}"` : 'the default';
    lines.push(
      `  Without an answer by ${deadline.toLocaleTimeString()} (in ${formatDuration(left)}), the turn goes on with ${fallback}.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The prompt line: the numbers to choose from, and text when the question takes it. */
export function promptFor(request: InputRequest): string {
  const range = request.options.length === 1 ? '1' : `1-${request.options.length}`;
  const text = request.free_text ? ', or type your own answer' : '';
  return `Choose ${range}${text} (Enter for the default): `;
}

/** A line typed as the answer: an option by its number, the default for nothing, text when allowed; else null. */
export function answerFor(request: InputRequest, line: string): TurnInputAnswer | null {
  const typed = line.trim();
  const { request_id } = request;
  if (typed === '') return { request_id, option_id: request.default_option_id };
  if (/^\d+$/.test(typed)) {
    const option = request.options[Number(typed) - 1];
    if (option) return { request_id, option_id: option.id };
    return request.free_text ? { request_id, text: typed } : null;
  }
  return request.free_text ? { request_id, text: typed.slice(0, 2000) } : null;
}

function formatDuration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** Asks on the terminal: the question, then lines until one is an answer, the input ends or `signal` aborts. */
export function terminalQuestions(io: QuestionIo): AskQuestion {
  // An input that has ended never closes a second reader: later questions are left to expire at once.
  let inputEnded = false;
  return (request, signal) =>
    new Promise((resolve) => {
      if (signal.aborted || inputEnded) return resolve(null);
      io.out.write(formatQuestion(request));
      io.out.write(promptFor(request));
      const rl = readline.createInterface({ input: io.stdin, terminal: false });
      let answer: TurnInputAnswer | null = null;
      const stop = () => rl.close();
      signal.addEventListener('abort', stop, { once: true });
      rl.on('line', (line) => {
        answer = answerFor(request, line);
        if (answer) return rl.close();
        io.out.write(`Not one of the choices. ${promptFor(request)}`);
      });
      rl.on('close', () => {
        signal.removeEventListener('abort', stop);
        if (!answer && !signal.aborted) inputEnded = true;
        if (!answer) io.out.write('\n');
        resolve(answer);
      });
    });
}

/**
 * The question open while a turn is watched, and its answer on the way to the API. The watch keeps reading the
 * stream meanwhile: when the turn goes on without the answer (the deadline, a cancellation) the question closes.
 */
export class OpenQuestion {
  private open: { abort: AbortController; done: Promise<void> } | null = null;

  constructor(
    private readonly amy: Amy,
    private readonly turnId: string,
    private readonly ask: AskQuestion,
    private readonly presenter: TurnPresenter,
  ) {}

  /** While a question is on the terminal (or its answer is being sent), nothing redraws over it. */
  get asking(): boolean {
    return this.open !== null;
  }

  start(request: InputRequest): void {
    this.close();
    this.presenter.pause();
    const abort = new AbortController();
    const done = this.ask(request, abort.signal)
      .then(async (answer) => {
        if (!answer) {
          if (!abort.signal.aborted)
            this.presenter.notice('No answer: the turn goes on with the default at the deadline.');
          return;
        }
        try {
          await this.amy.turns.respond(this.turnId, answer);
        } catch (err) {
          this.presenter.notice(`The answer was not taken: ${describeError(err)}`);
        }
      })
      .finally(() => {
        if (this.open?.abort === abort) this.open = null;
      });
    this.open = { abort, done };
  }

  /** Takes the question off the terminal: the turn went on without its answer, or the watch stopped. */
  close(): void {
    this.open?.abort.abort();
  }

  /** Once the question is closed and any answer sent. */
  async settled(): Promise<void> {
    await this.open?.done;
  }
}
