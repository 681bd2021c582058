/**
 * The workspace bundles as users run them (sdk/dist, cli/dist), for suites that run the built code: a
 * browser, a plain Node process, the `amy` command. `npm install` builds them; a checkout whose sources
 * changed since is rebuilt first, so these suites never test a stale bundle.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SDK_BUNDLE = path.join(REPO_ROOT, 'sdk/dist/index.js');
export const AMY_BIN = path.join(REPO_ROOT, 'cli/bin/amy.mjs');

const WORKSPACES = {
  '@amy/sdk': { bundle: SDK_BUNDLE, sources: ['sdk/src', 'contracts'] },
  '@amy/cli': { bundle: path.join(REPO_ROOT, 'cli/dist/amy.mjs'), sources: ['cli/src', 'sdk/src', 'contracts'] },
} as const;

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

function ensureBuilt(workspace: keyof typeof WORKSPACES): string {
  const { bundle, sources } = WORKSPACES[workspace];
  const built = fs.existsSync(bundle) ? fs.statSync(bundle).mtimeMs : 0;
  if (built < Math.max(...sources.map((dir) => newestSource(path.join(REPO_ROOT, dir))))) {
    execFileSync('npm', ['run', 'build', '--workspace', workspace], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  return bundle;
}

export const ensureSdkBuilt = () => ensureBuilt('@amy/sdk');
export const ensureCliBuilt = () => void ensureBuilt('@amy/cli');
