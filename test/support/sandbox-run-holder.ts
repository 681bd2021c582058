/**
 * A process that holds one sandbox run open (the code sleeps), for tests that kill a worker mid-run.
 * `node --import tsx sandbox-run-holder.ts <run-dir-parent>` prints `running <run dir>` once the
 * run's directory holds its input, then waits to be killed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createSandbox } from '../../platform/sandbox';
import { RUN_DIR_PREFIX } from '../../platform/sandbox/run-dir';

const parent = process.argv[2]!;
const python = path.resolve(__dirname, '..', '..', '.venv', 'bin', 'python');
const sandbox = createSandbox({ python, runDirParent: parent, limits: { wallMs: 600_000, cpuSeconds: 600 } });
const before = new Set(fs.readdirSync(parent));
void sandbox.run({
  code: 'import time\ntime.sleep(600)\nreturn 1',
  data: { summary: [], activities: [], profile: null },
});
const poll = setInterval(() => {
  const mine = fs.readdirSync(parent).find((name) => name.startsWith(RUN_DIR_PREFIX) && !before.has(name));
  if (mine && fs.existsSync(path.join(parent, mine, 'input', 'code.py'))) {
    clearInterval(poll);
    console.log(`running ${path.join(parent, mine)}`);
  }
}, 20);
