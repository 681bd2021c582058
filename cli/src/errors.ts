/**
 * What `amy` exits with, and how a failure reads: one line in plain words with the API's error code
 * and request id when there is one, never a stack trace, and nothing in it that a terminal would act on.
 */
import {
  APIConnectionError,
  APIError,
  InternalServerError,
  RateLimitError,
  StreamDisconnectedError,
  TurnFailedError,
} from '@amy/sdk';
import { terminalLine } from './terminal-text';

export const EXIT = {
  completed: 0,
  /** The turn failed, or the service could not do what was asked (too many turns in flight, a 5xx). */
  failed: 1,
  /** A wrong command line or configuration, or a request the API refused as it stands (a bad key, no such turn). */
  usage: 2,
  /** The turn ended failed with code `cancelled`. */
  cancelled: 3,
  /** The API could not be reached, or the event stream gave up after its retries. */
  unreachable: 4,
  /** Ctrl-C detached and nobody cancelled within the window. */
  interrupted: 130,
} as const;

/** A command line that cannot be run: exit 2 with the command's usage hint. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** No key, a malformed .data/stack.json, a bad AMY_* variable: exit 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The event stream failed `maxRetries` times in a row; says how to resume exactly where it stopped. */
export class StreamGaveUpError extends Error {
  override name = 'StreamGaveUpError';

  constructor(turnId: string, cause: StreamDisconnectedError, resumeCommand: string) {
    super(
      `Lost the event stream of ${turnId} after ${cause.attempts} failed connection${cause.attempts === 1 ? '' : 's'} ` +
        `(${networkReason(cause.cause)}). Resume with: ${resumeCommand}`,
    );
  }
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError || err instanceof ConfigError) return EXIT.usage;
  if (err instanceof StreamGaveUpError || err instanceof APIConnectionError) return EXIT.unreachable;
  if (err instanceof TurnFailedError) return err.code === 'cancelled' ? EXIT.cancelled : EXIT.failed;
  if (err instanceof RateLimitError || err instanceof InternalServerError) return EXIT.failed;
  // 400, 401, 403, 404, 413, 415, 422: repeating the same command cannot succeed.
  if (err instanceof APIError) return EXIT.usage;
  return EXIT.failed;
}

/** The error as one terminal-safe line: its message may be the service's, or hold what it was sent. */
export function describeError(err: unknown): string {
  return terminalLine(errorText(err));
}

function errorText(err: unknown): string {
  if (err instanceof TurnFailedError) return `The turn failed: ${err.message} ${codeAndRequest(err)}`;
  if (err instanceof APIError) return `${err.message} ${codeAndRequest(err)}`;
  if (err instanceof APIConnectionError) {
    const message = err.message.replace(/: fetch failed$/, '');
    return err.cause ? `${message} (${networkReason(err.cause)})` : message;
  }
  return err instanceof Error ? err.message : String(err);
}

export function codeAndRequest(err: { code: string; requestId?: string | undefined }): string {
  return err.requestId ? `(${err.code}, request ${err.requestId})` : `(${err.code})`;
}

/** The innermost reason a connection failed (`ECONNREFUSED`, a reset), which `fetch failed` hides. */
export function networkReason(err: unknown): string {
  let reason: unknown = err;
  for (let depth = 0; depth < 5 && reason instanceof Error; depth++) {
    const code = (reason as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    if (!(reason.cause instanceof Error)) break;
    reason = reason.cause;
  }
  return reason instanceof Error ? reason.message : String(reason);
}
