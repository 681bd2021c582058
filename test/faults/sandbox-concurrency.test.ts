/**
 * One slow user must not fail others, in the sandbox: a worker runs at most its
 * bound of sandboxes at once, and each run's process limit is its own; a run whose caller gives up
 * leaves the queue, or is killed; two workers on one host never share a uid. Real bubblewrap, real
 * Python, real worker-like processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { createSandbox, type SandboxData, type SandboxResult } from '../../platform/sandbox';
import { RUN_DIR_PREFIX } from '../../platform/sandbox/run-dir';
import { sandboxProcessesOf, sandboxProcessWhere, sandboxPids, survivors } from '../support/sandbox-processes';

const REPO = path.resolve(__dirname, '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const HOSTILE_DIR = path.join(__dirname, '..', 'sandbox-hostile');

const health = generateHealthData({ seed: 7, days: 120, endDate: new Date('2026-11-22T12:00:00Z') });
const DATA: SandboxData = { summary: health.daily, activities: health.workouts, profile: health.profile };
const steps = health.daily.map((row) => row.steps).filter((value): value is number => value !== null);
const MEAN_STEPS = steps.reduce((sum, x) => sum + x, 0) / steps.length;
const BENIGN = "return summary_df['steps'].mean()";

/** Twenty attacks at once: threads, forks, CPU, memory, output, escapes, sleep. */
const TWENTY = [
  'thread_bomb.py',
  'fork_bomb.py',
  'cpu_spin.py',
  'alloc_10gb.py',
  'alloc_10gb_numpy.py',
  'infinite_loop.py',
  'stdout_flood.py',
  'stdout_flood_fd.py',
  'huge_result.py',
  'segfault.py',
  'os_system.py',
  'subprocess_run.py',
  'ctypes_system.py',
  'ctypes_unshare.py',
  'kill_parent.py',
  'net_connect_outside.py',
  'net_dns.py',
  'read_shadow.py',
  'fill_scratch.py',
  'write_tmp.py',
];

function hostile(name: string): { code: string; expected: string } {
  const source = fs.readFileSync(path.join(HOSTILE_DIR, name), 'utf8');
  const expected = /^# Expect: (\w+)$/m.exec(source)?.[1];
  if (!expected) throw new Error(`${name} has no "# Expect:" line`);
  return { code: source, expected };
}

const runDirs = (parent: string) => fs.readdirSync(parent).filter((name) => name.startsWith(RUN_DIR_PREFIX));

function expectOk(result: SandboxResult): unknown {
  if (result.status !== 'ok') throw new Error(`expected a result, got ${JSON.stringify(result)}`);
  return result.result;
}

describe('sandbox runs per worker are bounded, and contained from one another', () => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-concurrency-runs-'));
  afterAll(() => fs.rmSync(runDirParent, { recursive: true, force: true }));

  test('twenty hostile programs at once with a bound of 3: each contained, never more than 3 running, a normal program beside them answered', async () => {
    const BOUND = 3;
    // A generous wall clock: the CPU and memory verdicts must not turn into timeouts on a loaded machine.
    const sandbox = createSandbox({
      python: PYTHON,
      concurrency: BOUND,
      runDirParent,
      limits: { wallMs: 30_000, cpuSeconds: 3, memoryMb: 1024, maxOutputBytes: 256 * 1024 },
    });
    const before = new Set(sandboxPids());
    const programs = TWENTY.map((name) => ({ name, ...hostile(name) }));
    const attacks = programs.map((program) => sandbox.run({ code: program.code, data: DATA }));
    // Queued in the middle of the attacks, as another user's question would be.
    const normal = sandbox.run({ code: BENIGN, data: DATA });
    expect(sandbox.load).toMatchObject({ limit: BOUND });

    const results = await Promise.all(attacks);
    expect(expectOk(await normal)).toBeCloseTo(MEAN_STEPS, 9);
    results.forEach((result, i) => {
      const { name, expected } = programs[i]!;
      if (expected === 'ok') expect({ name, result }).toMatchObject({ name, result: { status: 'ok' } });
      else expect({ name, result }).toMatchObject({ name, result: { status: 'error', kind: expected } });
    });
    // The bound was reached (twenty-one runs queued at once) and never passed.
    expect(sandbox.load).toEqual({ limit: BOUND, running: 0, waiting: 0, peak: BOUND });
    expect(await survivors(before)).toEqual([]);
    // No run directory is left; the uid lock files stay (removing a lock file is a race with its next taker).
    expect(runDirs(runDirParent)).toEqual([]);
  }, 300_000);

  test("a run that takes every thread it may does not take another run's: each run's process limit is its own", async () => {
    const sandbox = createSandbox({
      python: PYTHON,
      concurrency: 2,
      runDirParent,
      // Memory enough that the task limit (32), not the address space, is what stops the hog's threads.
      limits: { wallMs: 30_000, cpuSeconds: 20, memoryMb: 4096 },
    });
    // Takes threads until its limit refuses one, then holds them until the wall clock ends it.
    const hog = [
      'import threading, time',
      'threading.stack_size(256 * 1024)',
      'held = 0',
      'try:',
      '    while True:',
      '        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()',
      '        held += 1',
      'except RuntimeError:',
      '    pass',
      'time.sleep(600)',
    ].join('\n');
    const hogging = sandbox.run({ code: hog, data: DATA });
    // Barrier: the hog holds its threads (its limit is 32 tasks; it has reached about all of them).
    await sandboxProcessWhere((info) => info.threads >= 30);

    const threaded = [
      'import threading',
      'results = []',
      'workers = [threading.Thread(target=lambda i=i: results.append(i)) for i in range(8)]',
      'for w in workers:',
      '    w.start()',
      'for w in workers:',
      '    w.join()',
      'return sorted(results)',
    ].join('\n');
    expect(expectOk(await sandbox.run({ code: threaded, data: DATA }))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await hogging).toMatchObject({ status: 'error', kind: 'timeout' });
  }, 180_000);
});

/** The code of every run seen in `parent` while `watch` runs: each run's input/code.py, polled. */
function watchRunCode(parent: string) {
  const seen = new Set<string>();
  const timer = setInterval(() => {
    const names = fs.existsSync(parent) ? fs.readdirSync(parent) : [];
    for (const name of names) {
      if (!name.startsWith(RUN_DIR_PREFIX)) continue;
      try {
        seen.add(fs.readFileSync(path.join(parent, name, 'input', 'code.py'), 'utf8'));
      } catch {
        // not written yet, or already removed
      }
    }
  }, 10);
  return {
    seen,
    stop: () => clearInterval(timer),
  };
}

describe('a run whose caller gives up (cancelled, timed out) leaves the sandbox', () => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-abort-runs-'));
  afterAll(() => fs.rmSync(runDirParent, { recursive: true, force: true }));
  const SLOW = 'import time\ntime.sleep(600)\nreturn 1';

  /** A sandbox of one slot whose start-up (the probe, in a slot of its own) is over. */
  async function warmSandbox() {
    const sandbox = createSandbox({ python: PYTHON, concurrency: 1, runDirParent, limits: { wallMs: 120_000 } });
    expectOk(await sandbox.run({ code: BENIGN, data: DATA }));
    return sandbox;
  }

  async function until(condition: () => boolean) {
    const deadline = Date.now() + 30_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('the sandbox never got there');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  test('a queued run aborted while it waits never runs: it rejects with the reason, and the run behind it takes its place', async () => {
    const sandbox = await warmSandbox();
    const watcher = watchRunCode(runDirParent);
    const holding = new AbortController();
    try {
      const before = new Set(sandboxPids());
      const held = sandbox.run({ code: SLOW, data: DATA, signal: holding.signal }).catch((err: unknown) => err);
      await sandboxProcessWhere((info) => info.comm.startsWith('python'), before);

      // Slow too: had it ever started, the watcher could not miss its code.
      const cancelledCode = "import time\ntime.sleep(3)\nreturn 'the cancelled turn ran'";
      const cancelling = new AbortController();
      const cancelled = sandbox.run({ code: cancelledCode, data: DATA, signal: cancelling.signal });
      const behind = sandbox.run({ code: BENIGN, data: DATA });
      await until(() => sandbox.load.waiting === 2);
      expect(sandbox.load).toMatchObject({ running: 1, waiting: 2 });

      const reason = new Error('the turn was cancelled');
      cancelling.abort(reason);
      await expect(cancelled).rejects.toBe(reason);
      expect(sandbox.load).toMatchObject({ running: 1, waiting: 1 });

      holding.abort(new Error('done holding'));
      expect(await held).toMatchObject({ message: 'done holding' });
      expect(expectOk(await behind)).toBeCloseTo(MEAN_STEPS, 9);
      expect(sandbox.load).toMatchObject({ running: 0, waiting: 0 });
    } finally {
      holding.abort();
      watcher.stop();
    }
    expect([...watcher.seen].some((code) => code.includes('the cancelled turn ran'))).toBe(false);
    expect([...watcher.seen].some((code) => code.includes(BENIGN))).toBe(true);
  }, 120_000);

  test('a running run aborted is killed with everything it started, its directory removed, and its slot freed', async () => {
    const sandbox = await warmSandbox();
    const before = new Set(sandboxPids());
    const controller = new AbortController();
    // Threads that sleep too: the kill must take all of it.
    const threaded = [
      'import threading, time',
      'for _ in range(3):',
      '    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()',
      'time.sleep(600)',
    ].join('\n');
    const running = sandbox.run({ code: threaded, data: DATA, signal: controller.signal });
    await sandboxProcessWhere((info) => info.comm.startsWith('python') && info.threads >= 4, before);
    expect(runDirs(runDirParent)).toHaveLength(1);

    const reason = new Error('the attempt timed out');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(await survivors(before)).toEqual([]);
    expect(runDirs(runDirParent)).toEqual([]);
    expect(expectOk(await sandbox.run({ code: BENIGN, data: DATA }))).toBeCloseTo(MEAN_STEPS, 9);
  }, 120_000);

  test('a signal aborted before the call: nothing is started at all', async () => {
    const sandbox = createSandbox({ python: PYTHON, concurrency: 1, runDirParent });
    const reason = new Error('already cancelled');
    await expect(sandbox.run({ code: BENIGN, data: DATA, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(sandbox.preflight(BENIGN, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(sandbox.load).toMatchObject({ running: 0, waiting: 0 });
  });
});

describe('sandbox uids are unique across the workers of one host', () => {
  const sandboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-shared-sandbox-'));
  const holders: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(
      holders.map(
        (holder) =>
          new Promise<void>((resolve) => {
            if (holder.exitCode !== null || holder.signalCode !== null) resolve();
            else {
              holder.once('exit', () => resolve());
              holder.kill('SIGKILL');
            }
          }),
      ),
    );
    fs.rmSync(sandboxDir, { recursive: true, force: true });
  });

  /** A worker-like process whose sandbox holds `runs` runs at once, each sleeping; resolves once all run. */
  function startHolder(runs: number): Promise<ChildProcess> {
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'test', 'support', 'sandbox-run-holder.ts'), sandboxDir, String(runs)],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    holders.push(holder);
    return new Promise((resolve, reject) => {
      let running = 0;
      holder.stdout.setEncoding('utf8').on('data', (text: string) => {
        running += text.split('\n').filter((line) => line.startsWith('running ')).length;
        if (running >= runs) resolve(holder);
      });
      holder.once('exit', (code) => reject(new Error(`the run holder exited (${code})`)));
    });
  }

  test('two worker processes, three runs each at once, sharing the sandbox directory: no uid is used by both', async () => {
    expect(process.getuid?.()).toBe(0); // host uids are the worker's to hand out only as root
    const RUNS = 3;
    // One after the other: a holder announces every new run directory of the shared one, and started together
    // each could count the other's. The second's runs then find the first's uids held, the case in question.
    const first = await startHolder(RUNS);
    const second = await startHolder(RUNS);
    const launchers = [first.pid!, second.pid!];
    // Barrier: all six runs' interpreters are up (each run is one python process, as its own uid).
    const deadline = Date.now() + 60_000;
    let processes = sandboxProcessesOf(launchers);
    while (processes.length < 2 * RUNS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      processes = sandboxProcessesOf(launchers);
    }
    const uidsOf = (launcher: number) => new Set(processes.filter((p) => p.launcher === launcher).map((p) => p.uid));
    const [a, b] = launchers.map(uidsOf);
    expect(processes).toHaveLength(2 * RUNS);
    expect(a!.size).toBe(RUNS);
    expect(b!.size).toBe(RUNS);
    expect([...a!].filter((uid) => b!.has(uid))).toEqual([]);
  }, 120_000);
});
