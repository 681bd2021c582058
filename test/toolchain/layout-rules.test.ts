/**
 * The layout rules that lint enforces, each shown to bite on a probe: an import circle, a production
 * command-line tool importing dev/ tooling, shipped code importing dev/ (while dev/ may use what
 * ships), contracts/ importing anything but contracts/ and zod, and an export nothing uses. The probes
 * are real files (the circle rule follows imports on disk, knip reads the tree), written where the rule
 * applies, checked as `npm run lint` checks them, and removed after.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const root = path.resolve(__dirname, '../..');
const PROBE_DIR = '__layout_probe__';
const importDemoDays =
  "import { DEMO_HISTORY_DAYS } from '../../dev/synthetic-data/demo-user';\nexport const days = DEMO_HISTORY_DAYS;\n";

const PROBES: Record<string, string> = {
  [`checks/${PROBE_DIR}/a.ts`]: "import { b } from './b';\nexport const a = (): number => b() + 1;\n",
  [`checks/${PROBE_DIR}/b.ts`]: "import { a } from './a';\nexport const b = (): number => (a ? 1 : 0);\n",
  [`scripts/${PROBE_DIR}/tool.ts`]: importDemoDays,
  [`platform/${PROBE_DIR}/shipped.ts`]: importDemoDays,
  [`dev/${PROBE_DIR}/tooling.ts`]: "import { newId } from '../../platform/ids';\nexport const id = newId;\n",
  [`contracts/${PROBE_DIR}/upward.ts`]: "import { newId } from '../../platform/ids';\nexport const id = newId;\n",
  [`contracts/${PROBE_DIR}/package.ts`]: "import { Pool } from 'pg';\nexport const pool = Pool;\n",
  [`contracts/${PROBE_DIR}/ground.ts`]:
    "import { z } from 'zod';\nimport { MAX_MESSAGES } from '../conversation-limits';\nexport const messages = z.number().max(MAX_MESSAGES);\n",
};

interface LintResult {
  filePath: string;
  messages: Array<{ ruleId: string | null; message: string }>;
}

/** Each probe's lint messages as `rule: message`, by its path relative to the repo. */
let messagesByProbe: Record<string, string[]>;

beforeAll(async () => {
  const files = Object.keys(PROBES);
  try {
    for (const [file, text] of Object.entries(PROBES)) {
      fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
    }
    // A child process: the ESLint config is an ES module, which jest's module sandbox cannot load.
    const bin = path.join(root, 'node_modules/.bin/eslint');
    const { stdout } = await promisify(execFile)(bin, ['--format', 'json', ...files], { cwd: root }).catch(
      (err: { code?: number; stdout?: string }) => {
        if (err.code === 1 && err.stdout) return { stdout: err.stdout }; // exit 1: lint errors, reported on stdout
        throw err;
      },
    );
    const results = JSON.parse(stdout) as LintResult[];
    messagesByProbe = Object.fromEntries(
      results.map((r) => [path.relative(root, r.filePath), r.messages.map((m) => `${m.ruleId}: ${m.message}`)]),
    );
  } finally {
    for (const dir of new Set(files.map((file) => path.dirname(file)))) {
      fs.rmSync(path.join(root, dir), { recursive: true, force: true });
    }
  }
}, 120_000);

test('an import circle fails lint', () => {
  expect(messagesByProbe[`checks/${PROBE_DIR}/a.ts`]).toEqual([
    expect.stringMatching(/^import-x\/no-cycle: Dependency cycle detected/),
  ]);
  expect(messagesByProbe[`checks/${PROBE_DIR}/b.ts`]).toEqual([
    expect.stringMatching(/^import-x\/no-cycle: Dependency cycle detected/),
  ]);
});

test('scripts/ importing dev/ tooling fails lint', () => {
  expect(messagesByProbe[`scripts/${PROBE_DIR}/tool.ts`]).toEqual([
    expect.stringContaining('shipped code may not import dev/ tooling'),
  ]);
});

test('shipped code importing dev/ tooling fails lint; dev/ importing shipped code does not', () => {
  expect(messagesByProbe[`platform/${PROBE_DIR}/shipped.ts`]).toEqual([
    expect.stringContaining('shipped code may not import dev/ tooling'),
  ]);
  expect(messagesByProbe[`dev/${PROBE_DIR}/tooling.ts`]).toEqual([]);
});

test('contracts/ importing from above it or a package other than zod fails lint; contracts/ and zod do not', () => {
  expect(messagesByProbe[`contracts/${PROBE_DIR}/upward.ts`]).toEqual([
    expect.stringMatching(/^import-x\/no-restricted-paths: .*contracts\/ may import only contracts\/ and zod/),
  ]);
  expect(messagesByProbe[`contracts/${PROBE_DIR}/package.ts`]).toEqual([
    expect.stringMatching(/^no-restricted-imports: .*contracts\/ may import only contracts\/ and zod/),
  ]);
  expect(messagesByProbe[`contracts/${PROBE_DIR}/ground.ts`]).toEqual([]);
});

test('an export that nothing uses fails lint (knip)', async () => {
  // test/support/*-probe.ts files are entries (helper processes started by path), so the probe is
  // reachable and only its library's second export is unused.
  const probe = {
    'test/support/layout-knip-probe.ts': "import { used } from './layout-knip-probe-lib';\nexport default used;\n",
    'test/support/layout-knip-probe-lib.ts': 'export const used = 1;\nexport const knipProbeUnused = 2;\n',
  };
  let outcome: { code: number; stdout: string };
  try {
    for (const [file, text] of Object.entries(probe)) fs.writeFileSync(path.join(root, file), text);
    const bin = path.join(root, 'node_modules/.bin/knip');
    outcome = await promisify(execFile)(bin, [], { cwd: root }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '' }),
    );
  } finally {
    for (const file of Object.keys(probe)) fs.rmSync(path.join(root, file), { force: true });
  }
  expect(outcome.code).toBe(1);
  expect(outcome.stdout).toMatch(/knipProbeUnused\s.*test\/support\/layout-knip-probe-lib\.ts/);
}, 60_000);
