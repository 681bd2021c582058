/**
 * SIGTERM and SIGINT as one "stop" for a role (docs/operations.md#deploying). The first starts the
 * role's drain; a later one is logged and otherwise changes nothing, so the drain keeps its bound:
 * under `npm start` a Ctrl-C reaches each role twice (from the terminal, then from `npm start` itself),
 * and an orchestrator may repeat its SIGTERM. SIGKILL is the way to stop a role at once.
 */
import type { Logger } from './logger';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** Aborted, with the signal's name as its reason, when the process is first told to stop. */
export function shutdownSignal(logger: Logger): AbortSignal {
  const controller = new AbortController();
  for (const name of SIGNALS) {
    process.on(name, () => {
      if (controller.signal.aborted) {
        logger.info('already stopping; SIGKILL stops at once', { signal: name });
        return;
      }
      controller.abort(name);
    });
  }
  return controller.signal;
}
