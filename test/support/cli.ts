import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { compiledCommand } from './compiled-roles';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of the operators' commands (`scripts/<name>.ts`) as a real child process, compiled as
 * production runs it (`node dist/scripts/<name>.js`, ./compiled-roles.ts).
 */
export function runCli(script: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return promisify(execFile)(process.execPath, [compiledCommand(script), ...args], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: CliResult) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}
