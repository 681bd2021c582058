import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { compiledCommand } from './compiled-roles';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/**
 * Runs a command as a real child process: one of the operators' commands (`scripts/<name>.ts`) compiled,
 * as production runs it (`node dist/scripts/<name>.js`, ./compiled-roles.ts); anything else, which the
 * build does not ship (the demo user's command in dev/, a probe of the suites' own), through tsx.
 */
export function runCli(script: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  const shipped = path.relative(REPO_ROOT, path.resolve(REPO_ROOT, script)).startsWith(`scripts${path.sep}`);
  const entry = shipped ? [compiledCommand(script)] : ['--import', 'tsx', script];
  return promisify(execFile)(process.execPath, [...entry, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: CliResult) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}
