/**
 * What a finding computes exists on both sides of the gates' process boundary: in TypeScript
 * (contracts/statistics.ts, which the plan, the reproduction, the Critic and the workflow read) and in
 * Python (gates-py/gates/descriptions.py, which decides which of the seven gates judge a description).
 * A statistic one side calls an estimate and the other a record would be judged by gates the design does
 * not say; this test holds the two lists to the same names.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { defaultPythonPath } from '../../platform/gates';
import { ANALYSIS_STATISTICS, LEVEL_ESTIMATES, WINDOW_RECORDS } from '../../contracts/statistics';

const GATES_DIR = path.resolve(__dirname, '..', '..', 'gates-py');

function pythonLists(): { estimates: string[]; records: string[]; statistics: string[] } {
  const printed = spawnSync(
    defaultPythonPath(),
    [
      '-c',
      'import json; from gates import descriptions as d; ' +
        'print(json.dumps({"estimates": d.ESTIMATES, "records": d.RECORDS, "statistics": d.STATISTICS}))',
    ],
    { cwd: GATES_DIR, encoding: 'utf8' },
  );
  if (printed.status !== 0) throw new Error(`descriptions.py could not be read: ${printed.stderr}`);
  return JSON.parse(printed.stdout);
}

test('descriptions.py splits the descriptive statistics into estimates and records as statistics.ts does', () => {
  const python = pythonLists();
  expect(python.estimates).toEqual([...LEVEL_ESTIMATES]);
  expect(python.records).toEqual([...WINDOW_RECORDS]);
  expect([...python.statistics].sort()).toEqual([...ANALYSIS_STATISTICS].sort());
}, 60_000);
