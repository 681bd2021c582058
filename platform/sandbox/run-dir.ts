/**
 * A sandbox run's private directory on the host (it holds a copy of the user's data), owned through a
 * lock rather than named after a process id.
 *
 * A worker killed mid-run (SIGKILL, OOM) cannot remove its directory, so each sandbox sweeps the ones
 * left behind. The pid in a directory's name cannot say whether it is abandoned: it is wrong whenever
 * that pid means something else: reused by another process after the worker died (the
 * directory is then kept for ever), or a pid from another pid namespace (a second container sharing
 * /tmp: a live run's directory is then removed under it). A lock says it directly: each run holds an
 * flock on its directory for as long as it lives, the kernel drops the lock when the holder dies
 * however it dies, and the sweeper removes only directories whose lock it can take.
 *
 * Node has no flock, so the lock is held by util-linux's flock(1) (setpriv, which the sandbox already
 * needs as root, comes from the same package) running `cat` on a pipe from the worker: closing the
 * pipe releases it, and so does the worker's death, since `cat` then reads end-of-file.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

export const RUN_DIR_PREFIX = 'amy-sandbox-';
/** Attempts at a fresh directory when a sweeper takes the new one before its owner has locked it. */
const CREATE_ATTEMPTS = 5;

export interface DirLock {
  release(): Promise<void>;
}

/**
 * An exclusive flock on `dir`, held until `release`, or null when someone else holds it (or `dir` is
 * gone). Never waits for a lock.
 */
export function tryLockDir(dir: string): Promise<DirLock | null> {
  return new Promise((resolve, reject) => {
    const holder = spawn('flock', ['--exclusive', '--nonblock', dir, '/bin/sh', '-c', 'echo locked && exec cat'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const closed = new Promise<void>((done) => holder.once('close', () => done()));
    let settled = false;
    holder.stdin.on('error', () => undefined);
    holder.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (settled || !text.startsWith('locked')) return;
      settled = true;
      resolve({
        release: async () => {
          holder.stdin.end();
          await closed;
        },
      });
    });
    holder.once('error', (err) => {
      if (settled) return;
      settled = true;
      reject(new Error(`flock (util-linux) cannot be started: ${err.message}`, { cause: err }));
    });
    // Exit 1: the lock is held elsewhere; any other exit before "locked": the directory is gone.
    holder.once('close', () => {
      if (settled) return;
      settled = true;
      resolve(null);
    });
  });
}

/** A new private (0700) run directory under `parent`, already locked by this process. */
export async function createRunDir(parent: string): Promise<{ dir: string; lock: DirLock }> {
  for (let attempt = 1; ; attempt++) {
    const dir = await fs.mkdtemp(path.join(parent, RUN_DIR_PREFIX));
    const lock = await tryLockDir(dir);
    // A sweeper got to the directory between its creation and the lock: it is being (or was) removed.
    if (lock && (await exists(dir))) return { dir, lock };
    await lock?.release();
    if (attempt === CREATE_ATTEMPTS) throw new Error(`could not create a locked run directory under ${parent}`);
  }
}

/**
 * Removes the run directories under `parent` that nobody holds a lock on: their run ended without
 * removing it (the worker was killed). Directories named by the pid of an earlier version of this
 * code (`amy-sandbox-<pid>-…`) hold no lock and are removed too.
 */
export async function sweepStaleRunDirs(parent: string): Promise<void> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(parent, { withFileTypes: true });
  } catch {
    return;
  }
  await Promise.all(
    entries
      .filter((entry) => entry.isDirectory() && entry.name.startsWith(RUN_DIR_PREFIX))
      .map(async (entry) => {
        const dir = path.join(parent, entry.name);
        const lock = await tryLockDir(dir).catch(() => null);
        if (!lock) return;
        try {
          await fs.rm(dir, { recursive: true, force: true });
        } catch {
          // Someone else's directory we may not remove: leave it.
        } finally {
          await lock.release();
        }
      }),
  );
}

async function exists(dir: string): Promise<boolean> {
  try {
    await fs.stat(dir);
    return true;
  } catch {
    return false;
  }
}
