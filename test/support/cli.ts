import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one of the project's CLI scripts as a real child process, as `npm run …` would. */
export function runCli(script: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: CliResult) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}
