/**
 * The daily metrics exist twice, on either side of a process boundary: in TypeScript
 * (contracts/health-records.ts `DAILY_METRICS`, the columns the importer stores and the sandbox's
 * input files carry) and in Python (gates-py/sandbox/frames.py `DAILY_METRICS`, the columns of the
 * `summary` frame the generated analysis code is handed). The sandbox runs confined, seeing only its
 * own directory and the run's input (platform/sandbox/bwrap.ts), so frames.py keeps its own list; this
 * test holds the two to the same names in the same order, read from the module the sandbox imports.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { defaultPythonPath } from '../../platform/gates';
import { DAILY_METRICS, DAILY_SUMMARY_COLUMNS } from '../../contracts/health-records';

const SANDBOX_DIR = path.resolve(__dirname, '..', '..', 'gates-py', 'sandbox');

function pythonLists(): { metrics: string[]; columns: string[] } {
  const printed = spawnSync(
    defaultPythonPath(),
    [
      '-c',
      'import json, frames; print(json.dumps({"metrics": frames.DAILY_METRICS, "columns": frames.SUMMARY_COLUMNS}))',
    ],
    { cwd: SANDBOX_DIR, encoding: 'utf8' },
  );
  if (printed.status !== 0) throw new Error(`frames.py could not be read: ${printed.stderr}`);
  return JSON.parse(printed.stdout);
}

test('frames.py names the daily metrics records.ts names, in the same order', () => {
  const python = pythonLists();
  expect(python.metrics).toEqual([...DAILY_METRICS]);
  expect(python.columns).toEqual([...DAILY_SUMMARY_COLUMNS]);
}, 60_000);
