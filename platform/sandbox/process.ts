/**
 * Runs one confined process to completion: bounded output, a wall-clock deadline, and a kill that
 * takes everything the process started with it.
 *
 * bwrap is started as the leader of a process group of its own. Killing that group kills bwrap;
 * `--die-with-parent` then kills the sandbox's init, and the kernel kills every process left in a
 * pid namespace whose init has died. Nothing the generated code started can outlive the kill.
 *
 * The same kill ends a run whose caller gives up (`signal`: its activity was cancelled or timed out);
 * the promise then rejects with the signal's reason, once the process is gone.
 *
 * A process may also be started ahead of its job (`prestartConfined`, the warm pool of pool.ts): it
 * gets its input on stdin when the job is handed over, and the wall clock starts then.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface ConfinedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** The first STDERR_LIMIT bytes: diagnostics for a crash, not a channel for results. */
  stderr: string;
  timedOut: boolean;
  outputExceeded: boolean;
  durationMs: number;
  /** Why the run ended without an exit of its own: the fork server it ran in died (fork-server.ts). */
  lost?: string;
}

const STDERR_LIMIT = 16 * 1024;
/** After the kill, how long the pipes may stay open before they are torn down regardless. */
const CLOSE_GRACE_MS = 2_000;

export interface ConfinedLimits {
  wallMs: number;
  maxStdoutBytes: number;
  signal?: AbortSignal;
}

export function runConfined(file: string, args: string[], limits: ConfinedLimits): Promise<ConfinedExit> {
  if (limits.signal?.aborted) return Promise.reject(limits.signal.reason as Error);
  return startConfined(file, args, false).handOver(limits);
}

/** A confined process started before its job: `handOver` gives it the job, `discard` kills it unused. */
export interface PrestartedConfined {
  /** Whether it has ended already (it can then only report that it crashed). */
  readonly ended: boolean;
  /** Writes `input` to its stdin, closes it, and supervises it from now on as runConfined does. */
  handOver(limits: ConfinedLimits & { input?: string }): Promise<ConfinedExit>;
  discard(): void;
}

/** Starts `file` now; it waits, unsupervised and holding nothing alive, until its job is handed over. */
export function prestartConfined(file: string, args: string[]): PrestartedConfined {
  return startConfined(file, args, true);
}

function startConfined(file: string, args: string[], withStdin: boolean): PrestartedConfined {
  // An empty environment: bwrap needs none, and its own environ would be readable from inside.
  const child: ChildProcess = spawn(file, args, {
    env: {},
    stdio: [withStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let stdoutBytes = 0;
  let stderrBytes = 0;
  let maxStdoutBytes = Infinity;
  let timedOut = false;
  let outputExceeded = false;
  let graceTimer: NodeJS.Timeout | undefined;
  let closed: { code: number | null; signal: NodeJS.Signals | null } | { error: Error } | null = null;
  let onClosed: (() => void) | null = null;
  let started = performance.now();

  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is already gone.
    }
    graceTimer ??= setTimeout(() => {
      child.stdout!.destroy();
      child.stderr!.destroy();
    }, CLOSE_GRACE_MS);
  };

  child.stdin?.on('error', () => undefined);
  child.stdout!.on('data', (chunk: Buffer) => {
    if (outputExceeded) return;
    stdoutBytes += chunk.length;
    if (stdoutBytes > maxStdoutBytes) {
      outputExceeded = true;
      killGroup();
      return;
    }
    stdout.push(chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderrBytes >= STDERR_LIMIT) return;
    stderr.push(chunk.subarray(0, STDERR_LIMIT - stderrBytes));
    stderrBytes += chunk.length;
  });
  child.once('error', (error) => {
    closed = { error };
    onClosed?.();
  });
  child.once('close', (code, exitSignal) => {
    closed ??= { code, signal: exitSignal };
    onClosed?.();
  });
  if (withStdin) {
    // Waiting for its job, it must not keep the worker alive; once handed over, its wall clock does.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as { unref?: () => void } | null)?.unref?.();
  }

  return {
    get ended() {
      return closed !== null;
    },
    discard: killGroup,
    handOver({ wallMs, maxStdoutBytes: max, signal, input }) {
      return new Promise((resolve, reject) => {
        if (signal?.aborted) {
          killGroup();
          reject(signal.reason as Error);
          return;
        }
        started = performance.now();
        maxStdoutBytes = max;
        if (stdoutBytes > maxStdoutBytes) {
          outputExceeded = true;
          killGroup();
        }
        const deadline = setTimeout(() => {
          timedOut = true;
          killGroup();
        }, wallMs);
        const onAbort = () => killGroup();
        signal?.addEventListener('abort', onAbort, { once: true });
        onClosed = () => {
          clearTimeout(deadline);
          clearTimeout(graceTimer);
          signal?.removeEventListener('abort', onAbort);
          const end = closed!;
          if ('error' in end) {
            reject(end.error);
            return;
          }
          if (signal?.aborted) {
            reject(signal.reason as Error);
            return;
          }
          resolve({
            code: end.code,
            signal: end.signal,
            stdout: Buffer.concat(stdout).toString('utf8'),
            stderr: Buffer.concat(stderr).toString('utf8'),
            timedOut,
            outputExceeded,
            durationMs: Math.round(performance.now() - started),
          });
        };
        if (closed) onClosed();
        else if (child.stdin) child.stdin.end(input ?? '');
      });
    },
  };
}
