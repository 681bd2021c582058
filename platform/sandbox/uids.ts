/**
 * Which host uid a sandbox run gets when the worker is root: one no other run on the host has at the
 * same time, whichever worker process runs it.
 *
 * A run's uid is what makes its process limit (RLIMIT_NPROC) its own (see `identity` in bwrap.ts), and
 * the concurrency slots only make it unique within one worker: two workers on one host would both run
 * their first slot as the first uid of the range. So each run leases its uid host-wide for as long as it
 * runs: an exclusive flock on the uid's lock file in the sandbox directory, which every worker on the
 * host shares (`AMY_SANDBOX_DIR`; run-dir.ts makes it private). The kernel drops the lock when its holder
 * dies however it dies, so a killed worker's uids are free again at once, and there is no stale state to
 * recover. A run tries its slot's own uid first, so one worker alone takes a single lock per run.
 *
 * A pre-started run of the pool (pool.ts) leases its uid when it starts, and holds it while it waits.
 *
 * Without root each run has a user namespace of its own, where its uid is its own anyway: no lease.
 */
import path from 'node:path';
import { MAX_SANDBOX_SLOTS, sandboxUid } from './bwrap';
import { tryLock } from './run-dir';

export interface UidLease {
  /** The host uid the run has, for as long as the lease is held. */
  uid: number;
  release(): Promise<void>;
}

/** The lock file for `uid` under the sandbox directory. */
const uidLockPath = (dir: string, uid: number) => path.join(dir, `uid-${uid}.lock`);

/**
 * The first uid of the range, from `slot`'s own on, that no other run on the host holds; its lease
 * lasts until `release`. Throws when every uid of the range is taken (more runs at once on one host
 * than MAX_SANDBOX_SLOTS).
 */
export async function leaseSandboxUid(dir: string, slot: number, options: { unref?: boolean } = {}): Promise<UidLease> {
  for (let i = 0; i < MAX_SANDBOX_SLOTS; i++) {
    const uid = sandboxUid((slot + i) % MAX_SANDBOX_SLOTS, true);
    const lock = await tryLock(uidLockPath(dir, uid), options);
    if (lock) return { uid, release: () => lock.release() };
  }
  throw new Error(`all ${MAX_SANDBOX_SLOTS} sandbox uids of this host are in use`);
}
