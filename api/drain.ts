/**
 * An API process's drain (docs/operations.md#deploying), for the requests it is serving when told to
 * stop. The listening socket is closed by the server (new connections are refused, and a load balancer
 * sends them elsewhere); this keeps the books on what was already accepted:
 *
 * - every response in flight, so the process waits for them, up to the grace;
 * - `Connection: close` on every answer from then on, so no client reuses a connection to a process
 *   that is going away (a connection that falls idle is closed at once: `closeIdle`);
 * - `deadline`, aborted when the grace is over: whatever is still waiting (a blocking `stream: false`
 *   turn) answers then with a retryable error instead of being cut off.
 */
import type { ServerResponse } from 'node:http';

/** After the deadline, how long the answers it brings about get to go out before connections are cut. */
const ANSWER_AFTER_DEADLINE_MS = 2_000;

export interface RequestDrain {
  readonly draining: boolean;
  /** Aborted once the grace is over. */
  readonly deadline: AbortSignal;
  /** Counts `res` in flight until it closes. */
  track(res: ServerResponse): void;
  /** Responses not yet closed. */
  inFlight(): number;
  /**
   * Starts draining; resolves once nothing is in flight, or after the grace (and the answers the
   * deadline brings about), with how many responses were still unfinished.
   */
  drain(graceMs: number, closeIdle: () => void): Promise<{ unfinished: number }>;
}

export function createRequestDrain(): RequestDrain {
  const open = new Set<ServerResponse>();
  const deadline = new AbortController();
  let draining = false;
  let closeIdle = () => {};
  let idle: (() => void) | null = null;

  const closeAfter = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };

  return {
    get draining() {
      return draining;
    },
    deadline: deadline.signal,
    track(res) {
      open.add(res);
      if (draining) closeAfter(res);
      res.once('close', () => {
        open.delete(res);
        if (!draining) return;
        closeIdle();
        if (open.size === 0) idle?.();
      });
    },
    inFlight: () => open.size,
    async drain(graceMs, close) {
      draining = true;
      closeIdle = close;
      for (const res of open) closeAfter(res);
      const settled = new Promise<void>((resolve) => {
        idle = resolve;
        if (open.size === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'grace over'>((resolve) => {
        timer = setTimeout(() => resolve('grace over'), graceMs);
      });
      const first = await Promise.race([settled, graceOver]);
      clearTimeout(timer);
      if (first === 'grace over') {
        deadline.abort();
        await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_DEADLINE_MS))]);
      }
      return { unfinished: open.size };
    },
  };
}
