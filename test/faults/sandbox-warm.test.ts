/**
 * The warm sandbox (AMY_SANDBOX_WARM): runs are children of a fork server that imported pandas once
 * (root), or pre-started one-shot processes (the pool). Neither may give up what a fresh interpreter
 * per run gave: one run per process, nothing of one run (scratch, memory, data) in another, a uid of
 * each run's own with no capabilities, the wall clock and the caller's abort still killing the run,
 * and a dead fork server failing only the runs in it. Real bubblewrap, real Python; as root.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { createSandbox, type SandboxData, type SandboxResult } from '../../platform/sandbox';
import { isZygote, processInfo, sandboxPids, sandboxProcessWhere, survivors } from '../support/sandbox-processes';

const REPO = path.resolve(__dirname, '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

const health = generateHealthData({ seed: 7, days: 120, endDate: new Date('2026-11-22T12:00:00Z') });
const DATA: SandboxData = { summary: health.daily, activities: health.workouts, profile: health.profile };
const OTHER: SandboxData = { summary: health.daily.slice(0, 10), activities: [], profile: null };
const BENIGN = "return summary_df['steps'].mean()";
const SLOW = 'import time\ntime.sleep(600)\nreturn 1';

function expectOk(result: SandboxResult): unknown {
  if (result.status !== 'ok') throw new Error(`expected a result, got ${JSON.stringify(result)}`);
  return result.result;
}

/** A /proc/<pid>/status field of a host process. */
function statusField(pid: string, name: string): string {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
}

const namespace = (pid: string, kind: 'mnt' | 'ipc' | 'net') => fs.readlinkSync(`/proc/${pid}/ns/${kind}`);

describe('the fork server (AMY_SANDBOX_WARM=fork, as root)', () => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-warm-runs-'));
  const sandbox = createSandbox({
    python: PYTHON,
    warm: 'fork',
    concurrency: 2,
    runDirParent,
    limits: { wallMs: 60_000 },
  });
  // The zygote would otherwise live as long as the jest process, into the suites after this one.
  afterAll(async () => {
    await sandbox.close();
    fs.rmSync(runDirParent, { recursive: true, force: true });
  });

  /**
   * Starts `code` and waits for its process: its host pid, the run's promise, and `stop`, which aborts
   * it and waits for it to end.
   */
  async function started(code: string, data: SandboxData, controller = new AbortController()) {
    const before = new Set(sandboxPids());
    const run = sandbox.run({ code, data, signal: controller.signal });
    const pid = await sandboxProcessWhere((info) => info.comm.startsWith('python'), before);
    // The code runs once the seccomp filter is in (after the frames are loaded).
    while (fs.existsSync(`/proc/${pid}`) && statusField(pid, 'Seccomp') !== '2') {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const stop = async () => {
      controller.abort(new Error('done'));
      await run.catch(() => undefined);
    };
    return { pid, run, stop };
  }

  test('the warm path is used: each run is a new child of one long-lived zygote', async () => {
    expect(process.getuid?.()).toBe(0);
    expect(sandbox.warm).toBe('fork');
    expectOk(await sandbox.run({ code: BENIGN, data: DATA }));
    const first = await started(SLOW, DATA);
    const firstParent = processInfo(first.pid)!.ppid;
    await first.stop();
    const second = await started(SLOW, DATA);
    const secondParent = processInfo(second.pid)!.ppid;
    expect(isZygote(firstParent)).toBe(true);
    // The same zygote, a new process.
    expect(secondParent).toBe(firstParent);
    expect(second.pid).not.toBe(first.pid);
    await second.stop();
  }, 120_000);

  test('a module the zygote never imported is still found by the run, wherever the interpreter is installed', async () => {
    // A checkout in the temporary directory (a CI clone) has its .venv under /tmp, which each child
    // replaces with a scratch of its own: the interpreter's directories must be bound in it again.
    // scipy.signal: in the project's interpreter, and not among what the zygote imports (zygote.py).
    const lazy = 'import scipy.signal\nreturn [float(x) for x in scipy.signal.detrend([1.0, 2.0, 3.0])]';
    expect(expectOk(await sandbox.run({ code: lazy, data: DATA }))).toEqual([0, 0, 0].map(() => expect.any(Number)));
  });

  test('one run per process: a global, a module attribute, a scratch file and a shared memory segment of one run are not in the next', async () => {
    const leave = [
      'import builtins, os',
      "builtins.amy_left_behind = 'run one'",
      "pd.amy_left_behind = 'run one'",
      "open('/tmp/left-behind', 'w').write('run one')",
      // A System V shared memory segment outlives its process, in its IPC namespace.
      'import ctypes',
      'assert ctypes.CDLL(None).shmget(0x414D59, 4096, 0o1000 | 0o666) >= 0',
      'return os.getpid()',
    ].join('\n');
    const look = [
      'import builtins, ctypes, os',
      'return {',
      "    'shm': ctypes.CDLL(None).shmget(0x414D59, 0, 0),",
      "    'builtin': hasattr(builtins, 'amy_left_behind'),",
      "    'pandas': hasattr(pd, 'amy_left_behind'),",
      "    'scratch': os.path.exists('/tmp/left-behind'),",
      "    'pid': os.getpid(),",
      '}',
    ].join('\n');
    const firstPid = expectOk(await sandbox.run({ code: leave, data: DATA }));
    const second = expectOk(await sandbox.run({ code: look, data: DATA })) as Record<string, unknown>;
    expect(second).toMatchObject({ builtin: false, pandas: false, scratch: false, shm: -1 });
    expect(second.pid).not.toBe(firstPid);
  });

  test("two users' runs at once: distinct uids, no capabilities, namespaces of their own; neither sees the other's data or scratch", async () => {
    // User A's run writes a secret to its scratch and holds it.
    const a = await started(
      "open('/tmp/secret-of-a', 'w').write('health data of a')\nimport time\ntime.sleep(600)\nreturn 1",
      DATA,
    );
    try {
      // User B's run looks for anything of A's: scratch, other run directories, its own input only.
      const look = [
        'import os, sys',
        'found = []',
        // An interpreter installed under /tmp (a CI clone) is bound there read-only: not the scratch's files.
        "interpreter = tuple(p + '/' for p in {sys.prefix, sys.base_prefix})",
        "for top in ('/tmp', '/runs', '/input', '/sandbox'):",
        '    for root, dirs, files in os.walk(top):',
        "        dirs[:] = [d for d in dirs if not (os.path.join(root, d) + '/').startswith(interpreter)]",
        '        found += [os.path.join(root, f) for f in files]',
        'st = os.stat("/tmp")',
        'return {',
        "    'files': sorted(f for f in found if not f.startswith('/sandbox/')),",
        "    'secret': [f for f in found if 'secret' in f],",
        "    'rows': len(summary_df),",
        "    'scratch': [oct(st.st_mode & 0o777), st.st_uid == os.getuid()],",
        "    'uid': os.getuid(),",
        '}',
      ].join('\n');
      const seen = expectOk(await sandbox.run({ code: look, data: OTHER })) as Record<string, unknown>;
      expect(seen).toMatchObject({
        secret: [],
        rows: OTHER.summary.length,
        scratch: ['0o700', true],
        files: [
          '/input/activities.json',
          '/input/code.py',
          '/input/labs.json',
          '/input/profile.json',
          '/input/summary.json',
        ],
      });

      // Signalling or reading another process of the sandbox (A, or the zygote) is killed on sight.
      for (const attempt of [
        'import os\nos.kill(os.getpid() - 1, 0)\nreturn 1',
        [
          'import ctypes, os',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'buf = ctypes.create_string_buffer(64)',
          'local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)',
          'return libc.process_vm_readv(os.getpid() - 1, local, 1, local, 1, 0)',
        ].join('\n'),
      ]) {
        expect(await sandbox.run({ code: attempt, data: OTHER })).toMatchObject({ status: 'error', kind: 'forbidden' });
      }

      // While B runs beside A: seen from the host, each is its own uid, with nothing to escalate with.
      const b = await started(SLOW, OTHER);
      const zygote = processInfo(a.pid)!.ppid;
      expect(processInfo(b.pid)!.ppid).toBe(zygote);
      expect(processInfo(a.pid)!.uid).not.toBe(processInfo(b.pid)!.uid);
      expect(processInfo(zygote)!.uid).toBe('0');
      for (const pid of [a.pid, b.pid]) {
        expect(processInfo(pid)!.uid).not.toBe('0');
        for (const caps of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) {
          expect({ pid, caps, value: statusField(pid, caps) }).toEqual({ pid, caps, value: '0000000000000000' });
        }
        expect(statusField(pid, 'NoNewPrivs')).toBe('1');
        expect(statusField(pid, 'Seccomp')).toBe('2');
        expect(statusField(pid, 'Groups')).toBe('');
      }
      for (const kind of ['mnt', 'ipc', 'net'] as const) {
        expect(new Set([a.pid, b.pid, zygote].map((pid) => namespace(pid, kind))).size).toBe(3);
      }
      await b.stop();
    } finally {
      await a.stop();
    }
  }, 120_000);

  test('the wall clock and the caller’s abort kill the child, and nothing of it is left', async () => {
    const quick = createSandbox({ python: PYTHON, warm: 'fork', runDirParent, limits: { wallMs: 3_000 } });
    const before = new Set(sandboxPids());
    expect(await quick.run({ code: SLOW, data: DATA })).toMatchObject({ status: 'error', kind: 'timeout' });
    expect(await survivors(before)).toEqual([]);

    const controller = new AbortController();
    const { pid, run } = await started(SLOW, DATA, controller);
    const reason = new Error('the turn was cancelled');
    controller.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
    expect(expectOk(await sandbox.run({ code: BENIGN, data: DATA }))).toBeGreaterThan(0);
  }, 120_000);

  test('a zygote killed mid-run: that run fails as crashed, its child is gone, and the next run gets a new zygote', async () => {
    const { pid, run } = await started(SLOW, DATA);
    const zygote = processInfo(pid)!.ppid;
    expect(isZygote(zygote)).toBe(true);
    process.kill(Number(zygote), 'SIGKILL');
    expect(await run).toMatchObject({
      status: 'error',
      kind: 'crashed',
      message: expect.stringMatching(/fork server/),
    });
    expect(await survivors(new Set())).toEqual([]);

    const next = await started(SLOW, DATA);
    const newZygote = processInfo(next.pid)!.ppid;
    expect(isZygote(newZygote)).toBe(true);
    expect(newZygote).not.toBe(zygote);
    await next.stop();
    expect(expectOk(await sandbox.run({ code: BENIGN, data: DATA }))).toBeGreaterThan(0);
  }, 120_000);
});

describe('the pool (AMY_SANDBOX_WARM=pool)', () => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-pool-runs-'));
  const sandbox = createSandbox({ python: PYTHON, warm: 'pool', concurrency: 1, runDirParent });
  afterAll(async () => {
    await sandbox.close();
    fs.rmSync(runDirParent, { recursive: true, force: true });
  });

  test('a run is handed to a process started before it, which runs it alone and exits', async () => {
    expect(sandbox.warm).toBe('pool');
    const firstPid = expectOk(
      await sandbox.run({ code: "import os\nopen('/tmp/x', 'w').write('1')\nreturn os.getpid()", data: DATA }),
    );
    // The slot's next process is already there, waiting, before the next run is asked for.
    const spare = await sandboxProcessWhere((info) => info.comm.startsWith('python'));
    const second = expectOk(
      await sandbox.run({ code: "import os\nreturn [os.path.exists('/tmp/x'), len(summary_df)]", data: OTHER }),
    );
    // Not a listing of /tmp: an interpreter installed under the temporary directory has its mount points there.
    expect(second).toEqual([false, OTHER.summary.length]);
    expect(fs.existsSync(`/proc/${spare}`)).toBe(false);
    expect(firstPid).toBeDefined();
    expect(await sandbox.run({ code: 'import os\nos.system("true")', data: DATA })).toMatchObject({
      status: 'error',
      kind: 'forbidden',
    });
  }, 120_000);

  test('closing the sandbox stops the interpreter waiting for the next run', async () => {
    await sandboxProcessWhere((info) => info.comm.startsWith('python'));
    await sandbox.close();
    expect(await survivors(new Set())).toEqual([]);
  });
});
