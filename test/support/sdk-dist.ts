/**
 * The built `@amy/sdk` (sdk/dist), as users import it, for suites that run the bundle itself (a
 * browser, a plain Node process). `npm install` builds it; a checkout whose sources changed since is
 * rebuilt first, so these suites never test a stale bundle.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const SDK_BUNDLE = path.join(REPO_ROOT, 'sdk/dist/index.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

export function ensureSdkBuilt(): string {
  const built = fs.existsSync(SDK_BUNDLE) ? fs.statSync(SDK_BUNDLE).mtimeMs : 0;
  const sources = Math.max(
    newestSource(path.join(REPO_ROOT, 'sdk/src')),
    newestSource(path.join(REPO_ROOT, 'contracts')),
  );
  if (built < sources) {
    execFileSync('npm', ['run', 'build', '--workspace', '@amy/sdk'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  return SDK_BUNDLE;
}
