/**
 * A process that holds sandbox runs open (the code sleeps), for tests that kill a worker mid-run or
 * run two workers' sandboxes side by side. `node --import tsx sandbox-run-holder.ts <sandbox dir> [runs]`
 * starts `runs` runs at once (1 by default) in one sandbox whose concurrency is `runs`, prints
 * `running <run dir>` once each run's directory holds its input, then waits to be killed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createSandbox } from '../../platform/sandbox';
import { RUN_DIR_PREFIX } from '../../platform/sandbox/run-dir';

const parent = process.argv[2]!;
const runs = Number(process.argv[3] ?? 1);
const python = path.resolve(__dirname, '..', '..', '.venv', 'bin', 'python');
const sandbox = createSandbox({
  python,
  runDirParent: parent,
  concurrency: runs,
  limits: { wallMs: 600_000, cpuSeconds: 600 },
});
const before = new Set(fs.readdirSync(parent));
for (let i = 0; i < runs; i++) {
  void sandbox.run({
    code: 'import time\ntime.sleep(600)\nreturn 1',
    data: { summary: [], activities: [], profile: null },
  });
}
const announced = new Set<string>();
const poll = setInterval(() => {
  for (const name of fs.readdirSync(parent)) {
    if (!name.startsWith(RUN_DIR_PREFIX) || before.has(name) || announced.has(name)) continue;
    if (!fs.existsSync(path.join(parent, name, 'input', 'code.py'))) continue;
    announced.add(name);
    console.log(`running ${path.join(parent, name)}`);
  }
  if (announced.size === runs) clearInterval(poll);
}, 20);
