/**
 * The capabilities each process of the sandbox holds as root, read from the kernel (/proc/<pid>/status),
 * against the sets documented in platform/sandbox/bwrap.ts (`identity`) and docs/operations.md ("Gates
 * and sandbox capacity"). bubblewrap run by real root keeps every capability it is not told to drop, so
 * without these a worker's fork server would hold CAP_SYS_MODULE, CAP_DAC_OVERRIDE and every other.
 * Real bubblewrap, real Python, as root (as CI runs).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSandbox, type SandboxData } from '../../platform/sandbox';
import { bwrapArgs, pythonLayout, sandboxUid } from '../../platform/sandbox/bwrap';
import { findBwrap } from '../../platform/sandbox/find-bwrap';
import { capabilitiesOf } from '../support/capabilities';
import { isZygote, processInfo, proven, sandboxProcessWhere, sandboxPids } from '../support/sandbox-processes';

const REPO = path.resolve(__dirname, '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const DATA: SandboxData = { summary: [], activities: [], profile: null };
const SLOW = 'import time\ntime.sleep(600)\nreturn 1';

/** What the fork server needs to make each child a cold run's process (bwrap.ts, `identity`), in bit order. */
const FORK_SERVER = ['CAP_CHOWN', 'CAP_KILL', 'CAP_SETGID', 'CAP_SETUID', 'CAP_SETPCAP', 'CAP_SYS_ADMIN'];
/** What setpriv needs to make a cold run's process: the run's uid and gid for good, an empty bounding set. */
const COLD_RUN_SETUP = ['CAP_SETGID', 'CAP_SETUID', 'CAP_SETPCAP'];
const NONE = { CapInh: [], CapPrm: [], CapEff: [], CapBnd: [], CapAmb: [] };

/**
 * Waits until the run's code is about to run: its process is past confinement (seccomp is on). The
 * sandbox must have `proven` itself first, or its probe's process could be the one found.
 */
async function runningCode(before: Set<string>): Promise<string> {
  const passed = new Set(before);
  for (;;) {
    const pid = await sandboxProcessWhere((info) => info.comm.startsWith('python'), passed);
    // A python process that ends before its code runs (another suite's on a shared machine, or one that failed
    // to start) is passed over, and the search goes on.
    const seccomp = () => {
      try {
        return fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Seccomp:\s*(\d)/m)?.[1] ?? null;
      } catch {
        return 'gone';
      }
    };
    let state = seccomp();
    while (state !== '2' && state !== 'gone') {
      await new Promise((resolve) => setTimeout(resolve, 10));
      state = seccomp();
    }
    if (state === '2') return pid;
    passed.add(pid);
  }
}

function childrenOf(pid: string): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  } catch {
    return [];
  }
}

/** A process under `pid` named `comm`, once there is one. */
async function descendantNamed(pid: string, comm: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const queue = [pid];
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (next !== pid && processInfo(next)?.comm === comm) return next;
      queue.push(...childrenOf(next));
    }
    if (Date.now() > deadline) throw new Error(`no ${comm} under ${pid}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(() => {
  // As another user bwrap makes a user namespace instead, and none of these sets apply.
  expect(process.getuid?.()).toBe(0);
});

describe('the fork server (AMY_SANDBOX_WARM=fork)', () => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-caps-runs-'));
  const sandbox = createSandbox({ python: PYTHON, warm: 'fork', concurrency: 1, runDirParent });
  afterAll(async () => {
    await sandbox.close();
    fs.rmSync(runDirParent, { recursive: true, force: true });
  });

  test('holds CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP and CAP_SYS_ADMIN, nothing else, and nothing to pass on; a run forked from it holds none', async () => {
    await proven(sandbox, DATA);
    const controller = new AbortController();
    const run = sandbox.run({ code: SLOW, data: DATA, signal: controller.signal });
    try {
      const child = await runningCode(new Set(sandboxPids()));
      const zygote = processInfo(child)!.ppid;
      expect(isZygote(zygote)).toBe(true);
      expect(processInfo(zygote)!.uid).toBe('0');
      // Effective and permitted: what it can use. Bounding: the most an exec could give back to uid 0.
      // Inheritable and ambient: what an exec would pass on.
      expect(capabilitiesOf(zygote)).toEqual({
        CapEff: FORK_SERVER,
        CapPrm: FORK_SERVER,
        CapBnd: FORK_SERVER,
        CapInh: [],
        CapAmb: [],
      });
      expect(capabilitiesOf(child)).toEqual(NONE);
      // bubblewrap itself, above it (its init in the sandbox's pid namespace, and the one the worker started).
      const init = processInfo(zygote)!.ppid;
      const outer = processInfo(init)!.ppid;
      for (const pid of [init, outer]) {
        expect(processInfo(pid)!.comm).toBe('bwrap');
        expect(capabilitiesOf(pid)).toMatchObject({ CapEff: [], CapPrm: [] });
      }
    } finally {
      controller.abort(new Error('done'));
      await run.catch(() => undefined);
    }
  }, 120_000);
});

describe('a cold run (AMY_SANDBOX_WARM=off)', () => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-caps-cold-'));
  afterAll(() => fs.rmSync(runDirParent, { recursive: true, force: true }));

  test('bubblewrap gives the program that drops to the run’s uid (setpriv) only CAP_SETGID, CAP_SETUID and CAP_SETPCAP', async () => {
    // A cold run's command line, with a program that stays put in setpriv's place, read from the host.
    const mounts = {
      python: await pythonLayout(PYTHON),
      runnerDir: path.join(REPO, 'gates-py', 'sandbox'),
      scratchBytes: 1024 * 1024,
    };
    const args = bwrapArgs(mounts, ['/usr/bin/true'], { asRoot: true, uid: sandboxUid(0, true) });
    const options = args.slice(0, args.indexOf('--'));
    expect(args[options.length + 1]).toBe('/usr/bin/setpriv');
    const bwrap = spawn(findBwrap()?.path ?? 'bwrap', [...options, '--', '/usr/bin/sleep', '60'], {
      env: {},
      stdio: 'ignore',
      detached: true,
    });
    try {
      const standIn = await descendantNamed(String(bwrap.pid), 'sleep');
      expect(processInfo(standIn)!.uid).toBe('0');
      expect(capabilitiesOf(standIn)).toMatchObject({
        CapEff: COLD_RUN_SETUP,
        CapPrm: COLD_RUN_SETUP,
        CapAmb: COLD_RUN_SETUP,
      });
    } finally {
      process.kill(-bwrap.pid!, 'SIGKILL');
    }
  });

  test('its process holds none, the bounding set included (setpriv empties that only with CAP_SETPCAP)', async () => {
    const sandbox = createSandbox({ python: PYTHON, warm: 'off', concurrency: 1, runDirParent });
    const controller = new AbortController();
    let run: Promise<unknown> = Promise.resolve();
    try {
      await proven(sandbox, DATA);
      run = sandbox.run({ code: SLOW, data: DATA, signal: controller.signal });
      const pid = await runningCode(new Set(sandboxPids()));
      expect(processInfo(pid)!.uid).not.toBe('0');
      expect(capabilitiesOf(pid)).toEqual(NONE);
    } finally {
      controller.abort(new Error('done'));
      await run.catch(() => undefined);
      await sandbox.close();
    }
  }, 60_000);
});
