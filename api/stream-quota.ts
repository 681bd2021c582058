/**
 * Open SSE streams per API key, counted in this API process. A stream holds a socket and a
 * subscription for the whole turn, so one key must not be able to open them without bound. The count
 * is in memory: each API process allows the cap on its own, and a process that dies frees its count
 * with its sockets.
 */
export interface StreamQuota {
  /** Takes a slot for the key; returns its release (safe to call more than once), or null at the cap. */
  tryAcquire(apiKeyId: string): (() => void) | null;
  /** Streams open for the key in this process. */
  openStreams(apiKeyId: string): number;
}

export function createStreamQuota(maxPerKey: number): StreamQuota {
  const open = new Map<string, number>();
  return {
    tryAcquire(apiKeyId) {
      const n = open.get(apiKeyId) ?? 0;
      if (n >= maxPerKey) return null;
      open.set(apiKeyId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(apiKeyId) ?? 1) - 1;
        if (left <= 0) open.delete(apiKeyId);
        else open.set(apiKeyId, left);
      };
    },
    openStreams(apiKeyId) {
      return open.get(apiKeyId) ?? 0;
    },
  };
}
