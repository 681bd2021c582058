/**
 * The service under test is the compiled build, as production runs it: the services tier's global setup
 * runs `npm run build` once per jest run, and the harness starts the API, the worker and the operators'
 * commands from dist/ with plain `node` (no tsx). See docs/testing.md#the-compiled-roles.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const repoRoot = path.resolve(__dirname, '..', '..');

export const COMPILED_API = 'dist/api/main.js';
export const COMPILED_WORKER = 'dist/worker/main.js';
/** The workflow bundle `npm run build` writes, which the compiled worker loads (WORKFLOW_BUNDLE_PATH). */
export const COMPILED_WORKFLOW_BUNDLE = path.join(repoRoot, 'dist', 'workflow-bundle.js');

/** `scripts/turn-replay.ts` → `dist/scripts/turn-replay.js`: an operator's command as the build compiled it. */
export function compiledCommand(script: string): string {
  const relative = path.relative(repoRoot, path.resolve(repoRoot, script));
  if (!/^scripts\/[\w-]+\.ts$/.test(relative)) throw new Error(`${script} is not an operator's command in scripts/`);
  return path.join(repoRoot, 'dist', relative.replace(/\.ts$/, '.js'));
}

/** `npm run build`: the build under test is the one the repository's own script makes. */
export async function buildCompiledRoles(): Promise<void> {
  await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 }).catch(
    (err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`npm run build failed:\n${err.stdout ?? ''}${err.stderr ?? err.message}`);
    },
  );
}
