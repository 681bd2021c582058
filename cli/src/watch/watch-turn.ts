/** The watching loop wired to the process: Ctrl-C from its signals, the detach message on stderr. */
import type { CommandContext } from '../context';
import { followTurn } from './follow';
import type { TurnPresenter } from './presenter';
import type { AskQuestion } from './questions';

const resumeWatch = (turnId: string) => (lastEventId: number) => `amy watch ${turnId} --after ${lastEventId}`;

export function watchTurn(
  ctx: CommandContext,
  turnId: string,
  presenter: TurnPresenter,
  options: { afterEventId?: number; resumeCommand?: (lastEventId: number) => string; askQuestion?: AskQuestion } = {},
): Promise<number> {
  return followTurn({
    amy: ctx.amy(),
    turnId,
    afterEventId: options.afterEventId ?? 0,
    presenter,
    stderr: ctx.stderr,
    signals: ctx.signals,
    exitNow: () => ctx.exit(130),
    resumeCommand: options.resumeCommand ?? resumeWatch(turnId),
    askQuestion: options.askQuestion,
  });
}
