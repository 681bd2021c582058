/**
 * Ctrl-C while watching a turn. Watching is not the turn: the first Ctrl-C only detaches (the turn
 * keeps running on the server) and opens a short window in which a second one cancels the turn. A
 * Ctrl-C after that, while the cancellation is awaited, exits at once.
 */
export interface SignalSource {
  on(signal: 'SIGINT', listener: () => void): unknown;
  off(signal: 'SIGINT', listener: () => void): unknown;
}

export const CANCEL_WINDOW_MS = 3_000;

export class CtrlC {
  /** Aborted by the first Ctrl-C: stop watching. */
  readonly detach = new AbortController();
  private presses = 0;
  private onSecond: (() => void) | null = null;

  constructor(
    private readonly signals: SignalSource,
    private readonly exitNow: () => void,
  ) {
    signals.on('SIGINT', this.press);
  }

  /** True when Ctrl-C is pressed again within `ms` of the first press (or already was). */
  pressedAgainWithin(ms: number): Promise<boolean> {
    if (this.presses >= 2) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.onSecond = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  dispose(): void {
    this.signals.off('SIGINT', this.press);
  }

  private readonly press = () => {
    this.presses++;
    if (this.presses === 1) this.detach.abort();
    else if (this.presses === 2) this.onSecond?.();
    else this.exitNow();
  };
}
