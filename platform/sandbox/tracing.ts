/**
 * Each sandbox run, and each syntax check before one, is a span: its wait for a slot and its run, how
 * it ended (`amy.sandbox.outcome`: `ok` or the error's kind, `timeout`, `memory_limit`, …) and how long
 * the code itself ran. Never the code, the data or the output: they are the user's (see ./index.ts).
 */
import { wrapMethods } from '../method-wrappers';
import { failSpan, inSpan } from '../spans';
import type { Sandbox } from './sandbox';

const ATTR_OUTCOME = 'amy.sandbox.outcome';
const ATTR_RUN_MS = 'amy.sandbox.duration_ms';

/** The sandbox with each run and syntax check in its span. */
export function traceSandbox(sandbox: Sandbox): Sandbox {
  return wrapMethods(sandbox, {
    preflight: (preflight) =>
      inSpan('sandbox preflight', {}, async (span) => {
        const checked = await preflight();
        span.setAttribute(ATTR_OUTCOME, checked.ok ? 'ok' : 'syntax_error');
        return checked;
      }),
    run: (run) =>
      inSpan('sandbox run', {}, async (span) => {
        const result = await run();
        span.setAttribute(ATTR_RUN_MS, result.durationMs);
        span.setAttribute(ATTR_OUTCOME, result.status === 'ok' ? 'ok' : result.kind);
        if (result.status === 'error') failSpan(span, result.kind);
        return result;
      }),
  });
}
