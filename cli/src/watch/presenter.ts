/**
 * One event stream, several ways to present it: the live view (a terminal or plain text) and NDJSON
 * for scripts here, the trace file in ./trace-file.ts. The watching loop (./follow.ts) drives any of them.
 */
import type { TurnFailedError, TurnStreamEvent } from '@amy/sdk';
import { codeAndRequest, describeError } from '../errors';
import type { CommandContext } from '../context';
import { terminalJson, terminalLine } from '../terminal-text';
import { TurnView, type Transcripts } from '../view/model';
import { PlainRenderer } from '../view/plain-renderer';
import type { Renderer, TerminalOutput } from '../view/renderer';
import { terminalStyle } from '../view/style';
import { TtyRenderer } from '../view/tty-renderer';

export interface Outcome {
  /** The exit code the turn's end stands for. */
  code: number;
  failure: TurnFailedError | null;
  /** Whether this watch saw the terminal event, or only learnt afterwards that the turn had ended. */
  sawEnd: boolean;
}

export interface TurnPresenter {
  event(event: TurnStreamEvent, transcripts: Transcripts): void;
  /** Something about the watching itself (a reconnect), not about the turn. */
  notice(text: string): void;
  /** Called a few times a second while watching, for timers. */
  tick(): void;
  finish(turnId: string, outcome: Outcome): void;
  /** Takes down anything drawn live before other output; presenting may resume afterwards. */
  pause(): void;
}

class LiveViewPresenter implements TurnPresenter {
  constructor(
    private readonly view: TurnView,
    private readonly renderer: Renderer,
  ) {}

  event(event: TurnStreamEvent, transcripts: Transcripts): void {
    this.renderer.show(this.view.apply(event, transcripts));
  }

  notice(text: string): void {
    this.renderer.show([{ kind: 'notice', text }]);
  }

  tick(): void {
    this.renderer.tick();
  }

  finish(turnId: string, outcome: Outcome): void {
    if (!outcome.sawEnd) this.notice(alreadyEnded(turnId, outcome));
    this.renderer.close();
  }

  pause(): void {
    this.renderer.close();
  }
}

/** `--json`: every event as received, one JSON object per line, and nothing else on stdout. */
class NdjsonPresenter implements TurnPresenter {
  constructor(
    private readonly stdout: TerminalOutput,
    private readonly stderr: TerminalOutput,
  ) {}

  event(event: TurnStreamEvent): void {
    this.stdout.write(`${terminalJson(event)}\n`);
  }

  notice(text: string): void {
    this.stderr.write(`${terminalLine(text)}\n`);
  }

  tick(): void {}

  finish(turnId: string, outcome: Outcome): void {
    if (!outcome.sawEnd) this.notice(alreadyEnded(turnId, outcome));
    else if (outcome.failure) this.notice(`error: ${describeError(outcome.failure)}`);
  }

  pause(): void {}
}

export function alreadyEnded(turnId: string, outcome: Outcome): string {
  const { failure } = outcome;
  if (!failure) return `${turnId} had already completed: no events came after the point this watch resumed from.`;
  return `${turnId} had already ended: ${failure.message} ${codeAndRequest(failure)}`;
}

/**
 * `--json` gives NDJSON; otherwise the live view, redrawn in place on a terminal (stdout a TTY and
 * `TERM` not `dumb`) and plain text on anything else.
 */
export function presenterFor(ctx: Pick<CommandContext, 'stdout' | 'stderr' | 'env'>, json: boolean): TurnPresenter {
  if (json) return new NdjsonPresenter(ctx.stdout, ctx.stderr);
  const view = new TurnView();
  const interactive = ctx.stdout.isTTY === true && ctx.env.TERM !== 'dumb';
  const renderer = interactive
    ? new TtyRenderer(ctx.stdout, view, Date.now, terminalStyle(ctx.env))
    : new PlainRenderer(ctx.stdout);
  return new LiveViewPresenter(view, renderer);
}
