/**
 * Runs writers against a real Postgres one SQL statement at a time, in an order the test chooses.
 * Each writer gets a pool whose every statement (on `pool.query` and on a client from `pool.connect`)
 * first waits at a gate; the test releases one statement at a time. A released statement either
 * returns (the writer parks at its next gate or finishes) or waits for a row lock that the other
 * writer holds, which is read from `pg_locks`: no sleeps decide the order, the gates do.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Pool, PoolClient, QueryConfig } from 'pg';

type QueryArgs = [text: string | QueryConfig, values?: unknown[]];

export class SteppedWriter {
  private release: (() => void) | null = null;
  private pid = 0;
  done = false;
  outcome: PromiseSettledResult<unknown> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly observer: Pool,
  ) {}

  /** The pool to hand to the code under test. */
  readonly gatedPool = {
    query: async (...args: QueryArgs) => {
      const client = await this.pool.connect();
      try {
        return await this.gated(client, args);
      } finally {
        client.release();
      }
    },
    connect: async () => {
      const client = await this.pool.connect();
      return new Proxy(client, {
        get: (target, prop) =>
          prop === 'query' ? (...args: QueryArgs) => this.gated(target, args) : Reflect.get(target, prop, target),
      });
    },
  } as unknown as Pool;

  private async gated(client: PoolClient, args: QueryArgs) {
    this.pid = (client as unknown as { processID: number }).processID;
    await new Promise<void>((resolve) => (this.release = resolve));
    return client.query(...(args as [string, unknown[]]));
  }

  run(work: () => Promise<unknown>): void {
    void work().then(
      (value) => this.finish({ status: 'fulfilled', value }),
      (reason: unknown) => this.finish({ status: 'rejected', reason }),
    );
  }

  private finish(outcome: PromiseSettledResult<unknown>) {
    this.outcome = outcome;
    this.done = true;
  }

  get parked(): boolean {
    return this.release !== null;
  }

  /** Lets the next statement go, and waits until it has returned or waits for a lock. */
  async step(): Promise<void> {
    const release = this.release;
    if (!release) throw new Error('the writer is not waiting at a statement');
    this.release = null;
    release();
    await this.settle();
  }

  /** Until the writer waits at its next statement, has finished, or waits for a lock. */
  async settle(): Promise<void> {
    for (;;) {
      if (this.parked || this.done) return;
      const waiting = await this.observer.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [this.pid]);
      if (waiting.rowCount) return;
      await delay(1);
    }
  }
}

/**
 * `first` runs `firstSteps` statements, then `second` runs `secondSteps`, then both run to their end,
 * `first` whenever it can go on. A writer that finished or waits on a lock before its count stops there.
 */
export async function interleave(
  first: SteppedWriter,
  second: SteppedWriter,
  firstSteps: number,
  secondSteps: number,
): Promise<void> {
  await first.settle();
  await second.settle();
  for (let i = 0; i < firstSteps && first.parked; i++) await first.step();
  for (let i = 0; i < secondSteps && second.parked; i++) await second.step();
  while (!(first.done && second.done)) {
    const next = [first, second].find((writer) => writer.parked);
    if (next) await next.step();
    else await delay(1);
  }
}
