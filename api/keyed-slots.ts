/**
 * Slots per key, counted in this API process: what one caller may hold open at once (event streams per
 * API key, blocking replays per Idempotency-Key). Each slot holds a socket for as long as a turn runs,
 * so one caller must not be able to take them without bound. The count is in memory: each API process
 * allows the bound on its own, and a process that dies frees its count with its sockets.
 */
export interface KeyedSlots {
  /** Takes a slot for the key; returns its release (safe to call more than once), or null at the bound. */
  tryAcquire(key: string): (() => void) | null;
}

export function createKeyedSlots(maxPerKey: number): KeyedSlots {
  const held = new Map<string, number>();
  return {
    tryAcquire(key) {
      const n = held.get(key) ?? 0;
      if (n >= maxPerKey) return null;
      held.set(key, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(key) ?? 1) - 1;
        if (left <= 0) held.delete(key);
        else held.set(key, left);
      };
    },
  };
}
