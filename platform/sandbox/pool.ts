/**
 * The warm sandbox where the fork server cannot keep runs apart (a non-root worker: one mapped uid,
 * no capabilities to give each child an identity and a scratch of its own): one pre-started one-shot
 * process per concurrency slot, confined exactly as a cold run is (bwrap.ts, then runner.py `serve`:
 * the rlimits first, then the pandas import), waiting on its stdin for its single job. A run takes its
 * slot's spare, hands it the input files over stdin (no run directory), and a new spare starts behind
 * it. Each process still runs one analysis and exits, and no process ever holds more than one user's
 * data. What it saves is the wait for the import; its CPU is still spent once per run.
 *
 * As root (`AMY_SANDBOX_WARM=pool`) each spare leases its host uid when it starts (uids.ts) and holds
 * it until it has exited.
 */
import { prestartConfined, type ConfinedExit, type ConfinedLimits, type PrestartedConfined } from './process';
import type { UidLease } from './uids';

export interface SpareStarter {
  /** bwrap's arguments for a spare of `uid` (ignored without root). */
  args(uid: number): string[];
  /** A host uid for the spare as root, null otherwise; `slot` is its first choice. */
  lease(slot: number): Promise<UidLease | null>;
  /** The uid without a lease (inside the user namespace). */
  unleased(slot: number): number;
}

interface Spare {
  process: PrestartedConfined;
  lease: UidLease | null;
}

export class SparePool {
  private readonly spares = new Map<number, Promise<Spare>>();

  constructor(
    private readonly bwrap: string,
    private readonly starter: SpareStarter,
  ) {}

  /** Runs one job in `slot`'s spare (started now if there is none), and starts the slot's next spare. */
  async run(slot: number, input: string, limits: ConfinedLimits): Promise<ConfinedExit> {
    limits.signal?.throwIfAborted();
    let taken = this.spares.get(slot) ?? this.start(slot);
    this.spares.delete(slot);
    let spare = await taken;
    if (spare.process.ended) {
      // It died waiting (killed from outside, or it could not start): one fresh try, handed its job at once.
      void spare.lease?.release();
      taken = this.start(slot);
      spare = await taken;
    }
    this.spares.set(slot, this.start(slot));
    try {
      return await spare.process.handOver({ ...limits, input });
    } finally {
      // After the process is gone (handOver settles on its close): the uid is free for another.
      await spare.lease?.release();
    }
  }

  /** Kills every spare, unused. */
  close(): void {
    for (const spare of this.spares.values()) {
      void spare.then((s) => {
        s.process.discard();
        return s.lease?.release();
      });
    }
    this.spares.clear();
  }

  private async start(slot: number): Promise<Spare> {
    const lease = await this.starter.lease(slot);
    const uid = lease?.uid ?? this.starter.unleased(slot);
    return { process: prestartConfined(this.bwrap, this.starter.args(uid)), lease };
  }
}
