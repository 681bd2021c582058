/**
 * The bound on sandbox runs at once in one worker: a semaphore whose permits are numbered slots.
 *
 * Temporal would start up to 100 activities at once, each sandbox run may take a GiB of memory and a
 * core; past the bound, runs wait here in order of arrival. The slot's number is the run's identity on
 * the host (see sandboxUid in sandbox-bwrap.ts): two runs never hold the same slot at once, so a
 * per-uid limit applied to one run is that run's own.
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

  /** Runs `use` holding a slot, waiting for one if all are taken. */
  async with<T>(use: (slot: number) => Promise<T>): Promise<T> {
    const slot = await this.acquire();
    try {
      return await use(slot);
    } finally {
      this.release(slot);
    }
  }

  get load(): SlotsLoad {
    return { limit: this.limit, running: this.running, waiting: this.waiters.length, peak: this.peak };
  }

  private acquire(): Promise<number> {
    const slot = this.free.shift();
    if (slot === undefined) return new Promise((resolve) => this.waiters.push(resolve));
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
