/**
 * `npm test`: every check and every test tier, in two lanes that run side by side (docs/testing.md, "Where CI's
 * time goes"). The services tier (Postgres, Temporal, the compiled roles; most of the run, and mostly waiting on
 * them) is one lane; the other runs everything that needs no service: the typecheck, lint, the Python gates'
 * pytest, and the unit, workflow and toolchain tiers. Each lane stops at its first failure; `npm test` fails
 * when either lane does, after both have ended and printed their output.
 *
 * What keeps the two apart:
 * - The toolchain tier writes probe files into the tree it checks (test/toolchain/layout-rules.test.ts), which
 *   the services tier's build and its copies of the checkout (test/support/working-tree-copy.ts) would pick up,
 *   and lint would fail on; so it runs in a copy of the working tree of its own, made here before either lane
 *   starts.
 * - The SDK and CLI bundles are brought up to date here first, so that no suite of either lane rebuilds one
 *   while a suite of the other reads it.
 * - The rest share nothing that clashes: every server listens on a port the OS picked, the services tier's
 *   suites each have their own database and task queue, and the other lane starts no Postgres and a Temporal
 *   dev server of each workflow suite's own.
 * - The typecheck and lint run niced: they only compute, so they take the CPU the suites leave idle and yield
 *   it when a suite wants it. The suites of both lanes do not: they measure time (timeouts, graces, retry
 *   schedules, which of two activities starts first), and the workflow tier failed two such tests when it ran
 *   niced on a loaded machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyWorkingTree } from '../support/working-tree-copy';
import { ensureCliBuilt, ensureSdkBuilt, REPO_ROOT } from '../support/workspace-build';
import { runLane, runningChildren, type Lane, type StepOutcome } from './run-lane';

const LOG_DIR = path.join(REPO_ROOT, '.data', 'test-lanes');
const jest = (root: string) => path.join(root, 'node_modules', '.bin', 'jest');

function lanes(toolchainCopy: string): Lane[] {
  return [
    {
      name: 'services',
      steps: [
        { name: 'services tier', command: jest(REPO_ROOT), args: ['--runInBand', '--selectProjects', 'services'] },
      ],
    },
    {
      name: 'checks',
      steps: [
        { name: 'typecheck', command: 'npm', args: ['run', 'typecheck'], niceness: 10 },
        { name: 'lint', command: 'npm', args: ['run', 'lint'], niceness: 10 },
        { name: 'pytest', command: 'npm', args: ['run', 'test:py'] },
        {
          name: 'unit and workflow tiers',
          command: jest(REPO_ROOT),
          args: ['--runInBand', '--selectProjects', 'unit', 'workflows'],
        },
        {
          name: 'toolchain tier',
          command: jest(toolchainCopy),
          args: ['--runInBand', '--selectProjects', 'toolchain'],
          cwd: toolchainCopy,
        },
      ],
    },
  ];
}

function printSummary(outcomes: StepOutcome[]) {
  console.log('npm test:');
  for (const o of outcomes) {
    const status = o.code === null ? 'not run' : o.code === 0 ? 'passed' : `FAILED (exit ${o.code})`;
    console.log(`  ${o.lane.padEnd(9)} ${o.step.padEnd(24)} ${`${o.seconds} s`.padStart(7)}  ${status}`);
  }
}

async function main() {
  ensureSdkBuilt();
  ensureCliBuilt();
  const copyParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-toolchain-tier-'));
  const toolchainCopy = path.join(copyParent, path.basename(REPO_ROOT));
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      for (const child of runningChildren) child.kill(signal);
      process.exitCode = 1;
    });
  try {
    copyWorkingTree(toolchainCopy);
    // The copy's own bundles rather than links to ours: should a toolchain suite find them older than the
    // copy's sources (copied, not hard-linked, across file systems), it rebuilds the copy's, not the ones
    // the services tier is reading.
    for (const bundle of ['sdk/dist', 'cli/dist']) {
      fs.rmSync(path.join(toolchainCopy, bundle), { force: true });
      fs.cpSync(path.join(REPO_ROOT, bundle), path.join(toolchainCopy, bundle), {
        recursive: true,
        preserveTimestamps: true,
      });
    }
    const started = Date.now();
    const results = await Promise.all(
      lanes(toolchainCopy).map((lane) => runLane(lane, REPO_ROOT, path.join(LOG_DIR, `${lane.name}.log`))),
    );
    const outcomes = results.flat();
    printSummary(outcomes);
    console.log(`  both lanes: ${Math.round((Date.now() - started) / 1000)} s`);
    if (outcomes.some((o) => o.code !== 0)) process.exitCode = 1;
  } finally {
    fs.rmSync(copyParent, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
