/**
 * The host's view of sandboxed processes, for the sandbox suites: which processes run as a sandbox uid
 * (65534, or as root one uid per concurrency slot), and which of them this test process started.
 */
import fs from 'node:fs';
import type { Sandbox, SandboxData } from '../../platform/sandbox';
import { MAX_SANDBOX_SLOTS, SANDBOX_ROOT_UID_BASE, SANDBOX_UID } from '../../platform/sandbox/bwrap';

function isSandboxUid(uid: string): boolean {
  const n = Number(uid);
  return n === SANDBOX_UID || (n >= SANDBOX_ROOT_UID_BASE && n < SANDBOX_ROOT_UID_BASE + MAX_SANDBOX_SLOTS);
}

/** A process's comm, uid, parent and thread count, or null once it is gone. */
export function processInfo(pid: string): { comm: string; uid: string; ppid: string; threads: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)`, 'm').exec(status)?.[1] ?? '';
    return { comm: field('Name'), uid: field('Uid'), ppid: field('PPid'), threads: Number(field('Threads')) };
  } catch {
    return null;
  }
}

/** Whether `pid` is a sandbox's fork server (gates-py/sandbox/zygote.py, run as root under bwrap). */
export function isZygote(pid: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('/sandbox/zygote.py');
  } catch {
    return false;
  }
}

/**
 * Who started a sandboxed process: walking up from it through its bwrap processes (and the fork
 * server, when it is a child of one) ends at whoever started them; a sandbox that outlived its bwrap
 * ends at init instead ('1', or '0' once it is gone).
 */
function launcherOf(pid: string): string | null {
  for (let info = processInfo(pid); info; info = processInfo(pid)) {
    if (info.comm !== 'bwrap' && !isSandboxUid(info.uid) && !isZygote(pid)) return pid;
    pid = info.ppid;
  }
  return null;
}

const allSandboxed = () =>
  fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && isSandboxUid(processInfo(entry)?.uid ?? ''));

/**
 * Processes running as a sandbox uid that this test process (or one of `launchers`, processes it
 * started) could have started: sandboxes that other processes on the machine run at the same time (a
 * developer's second test run) are left out.
 */
export function sandboxPids(launchers: number[] = []): string[] {
  const ours = ['0', '1', String(process.pid), ...launchers.map(String)];
  return allSandboxed().filter((pid) => ours.includes(launcherOf(pid) ?? '1'));
}

/** Each of `launchers`' sandboxed processes: its pid, its uid on the host and which launcher started it. */
export function sandboxProcessesOf(launchers: number[]): Array<{ pid: string; uid: number; launcher: number }> {
  return allSandboxed().flatMap((pid) => {
    const launcher = Number(launcherOf(pid));
    const uid = Number(processInfo(pid)?.uid);
    return launchers.includes(launcher) && Number.isInteger(uid) ? [{ pid, uid, launcher }] : [];
  });
}

/**
 * Sandbox-uid processes not in `before`, once they have had `graceMs` to go. bwrap reports the code's
 * exit as soon as its init hears of it; the kernel's teardown of the rest of the pid namespace
 * follows within milliseconds.
 */
export async function survivors(before: Set<string>, graceMs = 2_000): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = sandboxPids().filter((pid) => !before.has(pid));
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Waits (polling /proc, up to `timeoutMs`) until one of this process's sandboxes, not one of `except`
 * (processes seen earlier), satisfies `test`.
 */
export async function sandboxProcessWhere(
  test: (info: NonNullable<ReturnType<typeof processInfo>>) => boolean,
  except: Set<string> = new Set(),
  timeoutMs = 60_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = sandboxPids().find((pid) => {
      if (except.has(pid)) return false;
      const info = processInfo(pid);
      return info !== null && test(info);
    });
    if (found) return found;
    if (Date.now() > deadline) throw new Error('no sandboxed process got there in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Has `sandbox` prove itself before a suite looks for a run's process: its first call starts with a
 * confined run of its own (platform/sandbox/index.ts, `probe`), a python process under the same bwrap
 * (or fork server) with seccomp on, that ends at once. Looked for during that first call, the probe's
 * process can be taken for the run's and be gone by the next read of /proc.
 */
export async function proven(sandbox: Sandbox, data: SandboxData): Promise<void> {
  const first = await sandbox.run({ code: 'return 1', data });
  if (first.status !== 'ok') throw new Error(`the sandbox's first run failed: ${first.kind}`);
}
