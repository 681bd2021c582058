/**
 * One slow user must not fail others, in the sandbox: a worker runs at most its
 * bound of sandboxes at once, and each run's process limit is its own. Real bubblewrap, real Python.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { createSandbox, type SandboxData, type SandboxResult } from '../../platform/sandbox';
import { sandboxProcessWhere, sandboxPids, survivors } from '../support/sandbox-processes';

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
    expect(fs.readdirSync(runDirParent)).toEqual([]);
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
