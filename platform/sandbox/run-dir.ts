/**
 * A sandbox run's private directory on the host (it holds a copy of the user's data), owned through a
 * lock rather than named after a process id, under a parent directory that is the worker's alone.
 *
 * The parent (`AMY_SANDBOX_DIR`) is made mode 0700 when missing and refused when it is not private:
 * a symbolic link, another user's directory, or one that its group or others may enter. Nobody else
 * can then plant, swap or read a run directory, or a lock file beside them (uids.ts).
 *
 * A worker killed mid-run (SIGKILL, OOM) cannot remove its directory, so each sandbox sweeps the ones
 * left behind. The pid in a directory's name cannot say whether it is abandoned: it is wrong whenever
 * that pid means something else: reused by another process after the worker died (the
 * directory is then kept for ever), or a pid from another pid namespace (a second container sharing
 * the directory: a live run's directory is then removed under it). A lock says it directly: each run holds an
 * flock on its directory for as long as it lives, the kernel drops the lock when the holder dies
 * however it dies, and the sweeper removes only directories whose lock it can take, and only its own
 * user's real directories (never a symbolic link, never what another user made).
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

export interface HeldLock {
  release(): Promise<void>;
}

/** The parent of the run directories is missing its privacy (see `preparePrivateDir`). */
export class SandboxDirError extends Error {
  override name = 'SandboxDirError';
}

const ownUid = () => process.getuid?.() ?? -1;

/** Why `dir` is no private directory of this process's user, or null when it is one. */
async function privacyProblem(dir: string): Promise<string | null> {
  // lstat: a symbolic link is judged as itself, never by what it points at.
  const stat = await fs.lstat(dir);
  if (stat.isSymbolicLink()) return 'is a symbolic link';
  if (!stat.isDirectory()) return 'is not a directory';
  if (stat.uid !== ownUid()) return "is not owned by the worker's user";
  if (stat.mode & 0o077) return `is open to other users (mode ${(stat.mode & 0o777).toString(8)}, not 700)`;
  return null;
}

/**
 * Makes `dir` (mode 0700) if it is missing, and throws SandboxDirError unless it is a directory, not a
 * symbolic link, owned by this process's user and closed to everyone else. An existing directory is
 * never repaired: someone else made it or opened it, and that is for an operator to look at.
 */
export async function preparePrivateDir(dir: string): Promise<void> {
  const existing = await fs.lstat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (!existing) {
    // Nothing there, not even a dangling symbolic link: ours to make (with its missing parents).
    const created = await fs.mkdir(dir, { recursive: true, mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return undefined; // someone else's since: judged below
      throw err;
    });
    // The umask may have taken bits from the mode: a directory made here is ours to set.
    if (created !== undefined) await fs.chmod(dir, 0o700);
  }
  const problem = await privacyProblem(dir);
  if (problem) throw new SandboxDirError(`the sandbox directory ${problem}`);
}

/**
 * An exclusive flock on `target` (a directory, or a file it creates when missing), held until
 * `release`, or null when someone else holds it (or `target` is gone). Never waits for a lock.
 * `unref`: the lock does not keep the process alive (a lease held by an idle pre-started run, pool.ts).
 */
export function tryLock(target: string, { unref = false }: { unref?: boolean } = {}): Promise<HeldLock | null> {
  return new Promise((resolve, reject) => {
    const holder = spawn('flock', ['--exclusive', '--nonblock', target, '/bin/sh', '-c', 'echo locked && exec cat'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const closed = new Promise<void>((done) => holder.once('close', () => done()));
    if (unref) {
      holder.unref();
      for (const stream of [holder.stdin, holder.stdout]) (stream as { unref?: () => void }).unref?.();
    }
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
export async function createRunDir(parent: string): Promise<{ dir: string; lock: HeldLock }> {
  for (let attempt = 1; ; attempt++) {
    const dir = await fs.mkdtemp(path.join(parent, RUN_DIR_PREFIX));
    const lock = await tryLock(dir);
    // A sweeper got to the directory between its creation and the lock: it is being (or was) removed.
    if (lock && (await exists(dir))) return { dir, lock };
    await lock?.release();
    if (attempt === CREATE_ATTEMPTS) throw new Error(`could not create a locked run directory under ${parent}`);
  }
}

/**
 * Removes the run directories under `parent` that nobody holds a lock on: their run ended without
 * removing it (the worker was killed). Directories named by the pid of an earlier version of this
 * code (`amy-sandbox-<pid>-…`) hold no lock and are removed too. Only this user's own directories are
 * touched: a symbolic link or another user's directory is left alone, whatever its name. A parent
 * that is not private (see `preparePrivateDir`) is not swept at all: SandboxDirError.
 */
export async function sweepStaleRunDirs(parent: string): Promise<void> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(parent, { withFileTypes: true });
  } catch {
    return;
  }
  const problem = await privacyProblem(parent);
  if (problem) throw new SandboxDirError(`the sandbox directory ${problem}`);
  await Promise.all(
    entries
      .filter((entry) => entry.isDirectory() && entry.name.startsWith(RUN_DIR_PREFIX))
      .map(async (entry) => {
        const dir = path.join(parent, entry.name);
        if (!(await isOwnDirectory(dir))) return;
        const lock = await tryLock(dir).catch(() => null);
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

/** A real directory (not a symbolic link to one) that this process's user owns. */
async function isOwnDirectory(dir: string): Promise<boolean> {
  const stat = await fs.lstat(dir).catch(() => null);
  return stat !== null && stat.isDirectory() && stat.uid === ownUid();
}

async function exists(dir: string): Promise<boolean> {
  try {
    await fs.stat(dir);
    return true;
  } catch {
    return false;
  }
}
