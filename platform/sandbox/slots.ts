/**
 * The bound on sandbox runs at once in one worker: a semaphore whose permits are numbered slots.
 *
 * Temporal would start up to 100 activities at once, each sandbox run may take a GiB of memory and a
 * core; past the bound, runs wait here in order of arrival. The slot's number is the run's identity on
 * the worker (see uids.ts for the host uid it runs as): two runs never hold the same slot at once.
 *
 * A caller that gives up (its activity was cancelled or timed out) passes an AbortSignal: while it
 * waits, the abort takes it out of the queue at once, so a cancelled turn's run never starts and never
 * holds up the runs behind it.
 */
export interface SlotsLoad {
  /** The bound. */
  limit: number;
  running: number;
  waiting: number;
  /** The most runs held at once since the sandbox was created. */
  peak: number;
}

export class Slots {
  private readonly free: number[];
  private readonly waiters: Array<(slot: number) => void> = [];
  private running = 0;
  private peak = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`the concurrency must be a positive integer, not ${limit}`);
    this.free = Array.from({ length: limit }, (_, slot) => slot);
  }

  /**
   * Runs `use` holding a slot, waiting for one if all are taken. When `signal` aborts before the slot is
   * handed over, `use` never runs and the promise rejects with the signal's reason; once `use` runs,
   * stopping on an abort is its job.
   */
  async with<T>(use: (slot: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const slot = await this.acquire(signal);
    try {
      return await use(slot);
    } finally {
      this.release(slot);
    }
  }

  get load(): SlotsLoad {
    return { limit: this.limit, running: this.running, waiting: this.waiters.length, peak: this.peak };
  }

  private acquire(signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const slot = this.free.shift();
    if (slot === undefined) {
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(signal!.reason as Error);
        };
        const waiter = (handed: number) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(handed);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiters.push(waiter);
      });
    }
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    return Promise.resolve(slot);
  }

  private release(slot: number): void {
    const next = this.waiters.shift();
    // Handed straight to the next in line: `running` is unchanged.
    if (next) next(slot);
    else {
      this.running--;
      this.free.push(slot);
    }
  }
}
