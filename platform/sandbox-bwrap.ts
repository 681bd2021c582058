/**
 * The bubblewrap (bwrap) command line that confines one sandboxed Python process.
 *
 * Inside, the process sees an empty, read-only root with: the system's /usr, the Python install and
 * venv at their own paths (so the venv's pyvenv.cfg still points at its base), the runner's code at
 * /sandbox and the run's input files at /input, all read-only; a minimal /dev; and a size-capped
 * private tmpfs at /tmp, its only writable place (its scratch directory, discarded by the kernel with
 * the mount namespace). There is no /proc: nothing needs it, and it is the way to other processes'
 * memory and environment. The process has no network (an empty network namespace), its own pid, ipc
 * and uts namespaces, an environment of the variables below only, no capabilities, and a uid that is
 * not the worker's. bwrap dies with the worker.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

/** `nobody`: the uid generated code runs as, so it owns nothing on the host and its task count is its own. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

export const SANDBOX_RUNNER_DIR = '/sandbox';
export const SANDBOX_INPUT_DIR = '/input';
export const SANDBOX_SCRATCH_DIR = '/tmp';

/** Where the interpreter lives: directories to bind read-only at their own paths. */
export interface PythonLayout {
  executable: string;
  prefixes: string[];
}

/** bubblewrap on PATH, or null. */
export function findBwrap(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'bwrap');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** Asks the (trusted) interpreter where it lives, so that exactly that is bound into the sandbox. */
export async function pythonLayout(python: string): Promise<PythonLayout> {
  const script = [
    'import json, os, sys',
    'base = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))',
    'print(json.dumps({"executable": sys.executable, "prefixes": sorted({sys.prefix, sys.base_prefix, base})}))',
  ].join('\n');
  const { stdout } = await promisify(execFile)(python, ['-s', '-c', script], { env: {}, timeout: 10_000 });
  return z.object({ executable: z.string(), prefixes: z.array(z.string()) }).parse(JSON.parse(stdout));
}

export interface SandboxMounts {
  python: PythonLayout;
  /** gates-py/sandbox on the host. */
  runnerDir: string;
  /** The run's input files on the host; absent for commands that need none. */
  inputDir?: string;
  scratchBytes: number;
}

const SANDBOX_ENV: Record<string, string> = {
  HOME: SANDBOX_SCRATCH_DIR,
  TMPDIR: SANDBOX_SCRATCH_DIR,
  PATH: '/usr/bin:/bin',
  LANG: 'C.UTF-8',
  TZ: 'UTC',
  // Same code, same data, same output: set iteration order must not vary between runs.
  PYTHONHASHSEED: '0',
  // One core's worth of BLAS per run: the worker runs several sandboxes at once.
  OMP_NUM_THREADS: '1',
  OPENBLAS_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
};

/** Top-level system paths that are symlinks into /usr on merged-/usr systems, directories elsewhere. */
const SYSTEM_PATHS = ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];

const isWithin = (child: string, parent: string) => child === parent || child.startsWith(parent + path.sep);

function systemMounts(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of SYSTEM_PATHS) {
    const stat = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else if (stat?.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  // Without the cache the loader cannot find Debian's multiarch libraries (libz, libssl, ...). Nothing
  // else of /etc is there: no passwd, no hosts, no resolv.conf, no shadow.
  args.push('--perms', '0755', '--dir', '/etc', '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache');
  return args;
}

/**
 * Binds for the interpreter's directories. bwrap would create their missing parents with mode 0700
 * (as root), which the sandbox uid could not traverse, so each parent is made explicitly, 0755.
 */
function pythonMounts(python: PythonLayout): string[] {
  const bound = ['/usr'];
  const args: string[] = [];
  // The scratch tmpfs is mounted first (see bwrapArgs) and keeps its 1777 mode.
  const created = new Set<string>([SANDBOX_SCRATCH_DIR]);
  for (const prefix of [...python.prefixes].sort()) {
    if (bound.some((dir) => isWithin(prefix, dir))) continue;
    const parents: string[] = [];
    for (let dir = path.dirname(prefix); dir !== '/'; dir = path.dirname(dir)) parents.unshift(dir);
    for (const dir of parents.filter((d) => !created.has(d))) {
      args.push('--perms', '0755', '--dir', dir);
      created.add(dir);
    }
    args.push('--ro-bind', prefix, prefix);
    bound.push(prefix);
  }
  return args;
}

/**
 * When the worker is root, bwrap runs without a user namespace (root can mount; an unprivileged
 * namespace would leave the code's real uid at 0, where RLIMIT_NPROC is not enforced) and hands
 * setpriv just enough capability to drop to SANDBOX_UID for good. Otherwise bwrap uses an
 * unprivileged user namespace, in which the process count is the sandbox's own, and forbids
 * nesting another one.
 */
function identity(asRoot: boolean): { args: string[]; prefix: string[] } {
  if (asRoot) {
    return {
      args: ['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID'],
      prefix: [
        '/usr/bin/setpriv',
        `--reuid=${SANDBOX_UID}`,
        `--regid=${SANDBOX_GID}`,
        '--clear-groups',
        '--inh-caps=-all',
        '--bounding-set=-all',
        '--',
      ],
    };
  }
  return {
    args: ['--unshare-user', '--disable-userns', '--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_GID)],
    prefix: [],
  };
}

/** bwrap's arguments to run `command` (an absolute path inside the sandbox, then its arguments). */
export function bwrapArgs(mounts: SandboxMounts, command: string[], asRoot = process.getuid?.() === 0): string[] {
  const { args: identityArgs, prefix } = identity(asRoot);
  const env = Object.entries(SANDBOX_ENV).flatMap(([name, value]) => ['--setenv', name, value]);
  const input = mounts.inputDir ? ['--ro-bind', mounts.inputDir, SANDBOX_INPUT_DIR] : [];
  return [
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
    // No controlling terminal to push keystrokes into (TIOCSTI).
    '--new-session',
    '--clearenv',
    ...env,
    ...systemMounts(),
    // Scratch before the interpreter's binds: a project (and its venv) under /tmp, as in a CI clone,
    // is then bound on top of the tmpfs instead of being hidden by it.
    '--perms',
    '1777',
    '--size',
    String(mounts.scratchBytes),
    '--tmpfs',
    SANDBOX_SCRATCH_DIR,
    ...pythonMounts(mounts.python),
    '--ro-bind',
    mounts.runnerDir,
    SANDBOX_RUNNER_DIR,
    ...input,
    '--dev',
    '/dev',
    // /dev/shm would be an unbounded tmpfs; nothing in /dev needs writing but the device nodes.
    '--remount-ro',
    '/dev',
    // The root itself is a tmpfs bwrap built; nothing may be written to it after set-up.
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_SCRATCH_DIR,
    ...identityArgs,
    '--',
    ...prefix,
    ...command,
  ];
}
