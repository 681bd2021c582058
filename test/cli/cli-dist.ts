/**
 * The built `amy` (cli/dist, behind cli/bin/amy.mjs), run as users run it. `npm install` builds it;
 * a checkout whose sources changed since (the CLI's, the SDK's or the contracts) is rebuilt first, so
 * the suites never test a stale bundle.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const AMY_BIN = path.join(REPO_ROOT, 'cli/bin/amy.mjs');
const CLI_BUNDLE = path.join(REPO_ROOT, 'cli/dist/amy.mjs');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

export function ensureCliBuilt(): void {
  const built = fs.existsSync(CLI_BUNDLE) ? fs.statSync(CLI_BUNDLE).mtimeMs : 0;
  const sources = Math.max(
    ...['cli/src', 'sdk/src', 'contracts'].map((dir) => newestSource(path.join(REPO_ROOT, dir))),
  );
  if (built < sources) {
    execFileSync('npm', ['run', 'build', '--workspace', '@amy/cli'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
}
