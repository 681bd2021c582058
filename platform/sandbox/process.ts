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
 */
import { spawn } from 'node:child_process';

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

export function runConfined(
  file: string,
  args: string[],
  { wallMs, maxStdoutBytes, signal }: { wallMs: number; maxStdoutBytes: number; signal?: AbortSignal },
): Promise<ConfinedExit> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const started = performance.now();
    // An empty environment: bwrap needs none, and its own environ would be readable from inside.
    const child = spawn(file, args, { env: {}, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let timedOut = false;
    let outputExceeded = false;
    let graceTimer: NodeJS.Timeout | undefined;

    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
      graceTimer ??= setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, CLOSE_GRACE_MS);
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, wallMs);
    const onAbort = () => killGroup();
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (outputExceeded) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdoutBytes) {
        outputExceeded = true;
        killGroup();
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderrBytes >= STDERR_LIMIT) return;
      stderr.push(chunk.subarray(0, STDERR_LIMIT - stderrBytes));
      stderrBytes += chunk.length;
    });
    const settled = () => {
      clearTimeout(deadline);
      clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.once('error', (err) => {
      settled();
      reject(err);
    });
    child.once('close', (code, exitSignal) => {
      settled();
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      resolve({
        code,
        signal: exitSignal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
        outputExceeded,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}
