/**
 * Watching a turn to its end through `amy.turns.stream`, which resumes across dropped connections on
 * its own, and turning the end into an exit code. Ctrl-C detaches and says how to resume; a second
 * Ctrl-C within the window cancels the turn and watches it end (see ./ctrl-c.ts).
 */
import {
  APIUserAbortError,
  StreamDisconnectedError,
  TurnFailedError,
  type Amy,
  type ReconnectInfo,
  type TurnStream,
} from '@amy/sdk';
import { EXIT, exitCodeFor, networkReason, StreamGaveUpError } from '../errors';
import { terminalLine } from '../terminal-text';
import { CANCEL_WINDOW_MS, CtrlC, type SignalSource } from './ctrl-c';
import type { Outcome, TurnPresenter } from './presenter';
import { OpenQuestion, type AskQuestion } from './questions';

const TICK_MS = 125;

export interface FollowOptions {
  amy: Amy;
  turnId: string;
  /** Start after this event id (0: from the first event). */
  afterEventId: number;
  presenter: TurnPresenter;
  /** Where the detach message goes. */
  stderr: { write(chunk: string): unknown };
  signals: SignalSource;
  /** A third Ctrl-C, while a cancellation is awaited. */
  exitNow: () => void;
  /** The command that picks up after `lastEventId`, for the detach message. */
  resumeCommand(lastEventId: number): string;
  /** Answers the turn's questions (`turn.input_required`); without it they are shown as events only. */
  askQuestion?: AskQuestion;
}

export async function followTurn(options: FollowOptions): Promise<number> {
  const { amy, turnId, presenter, stderr } = options;
  const ctrlC = new CtrlC(options.signals, options.exitNow);
  const onReconnect = (_lastEventId: number, { attempt, delayMs, cause }: ReconnectInfo) =>
    presenter.notice(
      `connection lost (${networkReason(cause)}); reconnecting in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt})`,
    );
  const stream = amy.turns.stream(turnId, {
    lastEventId: options.afterEventId,
    signal: ctrlC.detach.signal,
    onReconnect,
  });
  const question = options.askQuestion && new OpenQuestion(amy, turnId, options.askQuestion, presenter);
  try {
    return await present(stream, presenter, question);
  } catch (err) {
    if (!(err instanceof APIUserAbortError && ctrlC.detach.signal.aborted)) throw gaveUp(turnId, err, options);
    presenter.pause();
    stderr.write(
      `\nDetached: ${terminalLine(turnId)} keeps running. Resume watching with:\n` +
        `  ${terminalLine(options.resumeCommand(stream.lastEventId))}\n` +
        `Press Ctrl-C again within ${CANCEL_WINDOW_MS / 1000} s to cancel the turn.\n`,
    );
    if (!(await ctrlC.pressedAgainWithin(CANCEL_WINDOW_MS))) return EXIT.interrupted;
    stderr.write(`Cancelling ${terminalLine(turnId)}…\n`);
    await amy.turns.cancel(turnId);
    // Watch it end from where the view stopped: it ends failed with code `cancelled`, or had just finished.
    const rest = amy.turns.stream(turnId, { lastEventId: stream.lastEventId, onReconnect });
    try {
      return await present(rest, presenter);
    } catch (restErr) {
      throw gaveUp(turnId, restErr, options);
    }
  } finally {
    ctrlC.dispose();
  }
}

async function present(stream: TurnStream, presenter: TurnPresenter, question?: OpenQuestion): Promise<number> {
  const ticker = setInterval(() => {
    if (!question?.asking) presenter.tick();
  }, TICK_MS);
  let sawEnd = false;
  try {
    for await (const event of stream) {
      // The turn went on (answered, the deadline passed, it ended): a question still open is moot.
      if (event.type === 'turn.input_received' || event.type === 'turn.completed' || event.type === 'turn.failed') {
        question?.close();
        await question?.settled();
      }
      presenter.event(event, stream);
      if (event.type === 'turn.input_required') question?.start(event);
      if (event.type === 'turn.completed' || event.type === 'turn.failed') sawEnd = true;
      else if (event.type === 'turn.retried') sawEnd = false;
    }
  } finally {
    clearInterval(ticker);
    question?.close();
    await question?.settled();
    presenter.pause();
  }
  const outcome = await outcomeOf(stream, sawEnd);
  presenter.finish(stream.turnId, outcome);
  return outcome.code;
}

async function outcomeOf(stream: TurnStream, sawEnd: boolean): Promise<Outcome> {
  try {
    await stream.finalResult();
    return { code: EXIT.completed, failure: null, sawEnd };
  } catch (err) {
    if (err instanceof TurnFailedError) return { code: exitCodeFor(err), failure: err, sawEnd };
    throw err;
  }
}

const gaveUp = (turnId: string, err: unknown, options: FollowOptions) =>
  err instanceof StreamDisconnectedError
    ? new StreamGaveUpError(turnId, err, options.resumeCommand(err.lastEventId))
    : err;
