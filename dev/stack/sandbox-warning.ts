/**
 * What `npm start` says when this host cannot run the sandbox: data questions would fail turn after
 * turn with an error few would trace back to a missing package, so it is said up front, loudly.
 */
import { checkBwrap, type BwrapCheck } from '../../platform/sandbox/bwrap';

/** The warning for a failed check, or null when the sandbox can run. */
export function sandboxWarning(check: BwrapCheck): string | null {
  if (check.ok) return null;
  const cause =
    check.reason === 'not_installed'
      ? `bubblewrap (bwrap) is not installed (${check.detail}).`
      : `bubblewrap cannot run here: ${check.detail}`;
  const fix =
    check.reason === 'not_installed'
      ? 'Install it (Debian/Ubuntu: apt-get install bubblewrap) and restart npm start.'
      : 'Allow it user namespaces (or run as root), e.g. sysctl kernel.unprivileged_userns_clone=1, and restart.';
  const rule = '!'.repeat(78);
  return [
    rule,
    '!! DATA QUESTIONS CANNOT RUN: the sandbox for generated analysis code is unavailable.',
    `!! ${cause}`,
    `!! ${fix}`,
    '!! Knowledge and coaching questions work; a data question ends with its analysis unavailable.',
    rule,
  ].join('\n');
}

/** Checks this host and prints the warning to stderr when the sandbox cannot run. */
export async function warnIfNoSandbox(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const warning = sandboxWarning(await checkBwrap(env));
  if (warning) console.error(warning);
  return warning === null;
}
