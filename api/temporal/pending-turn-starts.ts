/**
 * The turn workflow starts an API process still has going after it answered their POST
 * (api/temporal/turn-workflows.ts). The process's shutdown waits for them before it closes its Temporal
 * connection, and a cancellation of such a turn waits for its start instead of finding no workflow to
 * cancel.
 */
export interface PendingTurnStarts {
  /** Keeps `start` (which must not reject) until it settles. */
  add(turnId: string, start: Promise<void>): void;
  /** The turn's start, if this process still has it going. */
  of(turnId: string): Promise<void> | undefined;
  /**
   * Resolves once every start going now has settled, or after `withinMs` (a start can hang in the Temporal
   * client's retries while the server is away), with how many are still going.
   */
  settled(withinMs: number): Promise<number>;
}

export function createPendingTurnStarts(): PendingTurnStarts {
  const pending = new Map<string, Promise<void>>();
  return {
    add(turnId, start) {
      const tracked = start.finally(() => pending.delete(turnId));
      pending.set(turnId, tracked);
    },
    of: (turnId) => pending.get(turnId),
    async settled(withinMs) {
      await settledWithin(Promise.all(pending.values()), withinMs);
      return pending.size;
    },
  };
}

/** `promise`'s value if it settles within `ms`, else null (it goes on): how long a POST or a shutdown waits for starts. */
export async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
