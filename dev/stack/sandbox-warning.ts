/**
 * What `npm start` says when this host cannot run the sandbox: data questions would fail turn after
 * turn with an error few would trace back to a missing package, so it is said up front, as a warning
 * with the fix, and again in the banner.
 */
import type { Logger } from '../../platform/logger';
import { checkBwrap, type BwrapCheck } from '../../platform/sandbox/bwrap';

export interface SandboxProblem {
  cause: string;
  fix: string;
}

/** Why the sandbox cannot run and how to fix it, or null when it can. */
export function sandboxProblem(check: BwrapCheck): SandboxProblem | null {
  if (check.ok) return null;
  return check.reason === 'not_installed'
    ? {
        cause: `bubblewrap (bwrap) is not installed (${check.detail})`,
        fix: 'install it (Debian/Ubuntu: apt-get install bubblewrap) and restart npm start',
      }
    : {
        cause: `bubblewrap cannot run here: ${check.detail}`,
        fix: 'allow it user namespaces (or run as root), e.g. sysctl kernel.unprivileged_userns_clone=1, and restart',
      };
}

/** Checks this host and logs a warning when the sandbox cannot run; true when it can. */
export async function warnIfNoSandbox(
  logger: Pick<Logger, 'warn'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const problem = sandboxProblem(await checkBwrap(env));
  if (problem)
    logger.warn('DATA QUESTIONS CANNOT RUN: the sandbox for generated analysis code is unavailable', {
      ...problem,
      unaffected: 'knowledge and coaching questions work; a data question ends with its analysis unavailable',
    });
  return problem === null;
}
