/**
 * The one way the dev tooling (`npm start`, the test harness, the benchmarks) runs a process and waits
 * until it can be used: a role of the service as `npm start` runs it (`node --import tsx <entry>`), a
 * compiled role as production runs it (`node dist/<role>/main.js`), or any command (postgres, the
 * Temporal CLI).
 *
 * - A role is a single process: the tsx CLI would add a wrapper process that a hard kill leaves orphaned.
 * - Ready means that a stdout line satisfies `ready.line`, or that a polled `ready.check` (a port,
 *   /healthz) answers, within `timeoutMs`. A process that exits first, or is not ready in time, fails
 *   the launch with its last output lines, and is stopped if it still runs.
 * - Its stdout and stderr are read line by line (a pipe nobody reads would block a chatty child), the
 *   last lines are kept for error messages, `echo` copies them to ours and `onLine` sees each. With
 *   `logFile` they go to that file instead, and an error quotes the end of the file.
 * - `stop()` sends SIGTERM (or `stopSignal`) and SIGKILL if the process is still there after `graceMs`;
 *   `kill()` is SIGKILL at once, for the fault suites. Both resolve once the process has exited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const repoRoot = path.resolve(__dirname, '..', '..');
const KEPT_LINES = 100;
const QUOTED_LINES = 30;

/** When a launched process is ready, and what its readiness says (e.g. the URL it printed). */
export type Readiness<T> =
  { line: (line: string) => T | undefined } | { check: () => Promise<T | undefined>; intervalMs?: number };

/** Ready once a stdout line contains `text`, e.g. the worker's `worker polling`. */
export const lineIncludes = (text: string): Readiness<true> => ({
  line: (line) => (line.includes(text) ? true : undefined),
});

/** Ready once `url` answers 2xx, e.g. the API's /healthz. */
export const httpOk = (url: string, intervalMs = 200): Readiness<true> => ({
  check: async () => ((await fetch(url)).ok ? true : undefined),
  intervalMs,
});

type Target =
  /** A TypeScript entry point, relative to the repository root or absolute: `node [nodeArgs] --import tsx <entry>`. */
  | { entry: string; nodeArgs?: string[] }
  /** Compiled JavaScript (`npm run build`'s dist/), relative to the repository root or absolute: plain `node [nodeArgs] <script>`. */
  | { script: string; nodeArgs?: string[] }
  | { command: string; args?: string[] };

/** The executable and its arguments for `target`. */
function commandLine(target: Target): [string, string[]] {
  if ('entry' in target)
    return [process.execPath, [...(target.nodeArgs ?? []), '--import', 'tsx', path.resolve(repoRoot, target.entry)]];
  if ('script' in target)
    return [process.execPath, [...(target.nodeArgs ?? []), path.resolve(repoRoot, target.script)]];
  return [target.command, target.args ?? []];
}

export type LaunchOptions<T> = Target & {
  /** Names the process in errors, e.g. "the worker". */
  name: string;
  ready: Readiness<T>;
  /** Added to this process's environment; an undefined value removes the variable. */
  env?: NodeJS.ProcessEnv;
  /** Start from an empty environment instead of this process's (only `env`). */
  isolatedEnv?: boolean;
  /** Defaults to the repository root. */
  cwd?: string;
  /** Run as another user (Postgres refuses to run as root). */
  runAs?: { uid: number; gid: number };
  /** Defaults to two minutes. */
  timeoutMs?: number;
  /** Which of its output to copy to ours, line by line; none by default. */
  echo?: 'none' | 'stderr' | 'all';
  /** Put before every echoed line. */
  prefix?: string;
  /** Called with every line it writes, e.g. to relay it as a log entry of ours. */
  onLine?: (line: string, from: 'stdout' | 'stderr') => void;
  /** Append stdout and stderr to this file instead of reading them. */
  logFile?: string;
  /** Defaults to SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** How long `stop()` waits before SIGKILL; 15 s by default. */
  graceMs?: number;
  /** A set the process belongs to while it runs, e.g. so that everything can be stopped on Ctrl-C. */
  track?: Set<LaunchedProcess>;
};

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LaunchedProcess {
  name: string;
  pid: number;
  child: ChildProcess;
  /** Resolves when the process has exited, however that came about. */
  exited: Promise<ExitStatus>;
  alive(): boolean;
  /** Its last output lines (or the end of its log file). */
  output(): string;
  /** `stopSignal`, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(): Promise<void>;
  /** SIGKILL now; resolves once it has exited. */
  kill(): Promise<void>;
}

/**
 * Sends `signal` to `child` and resolves once it has exited, sending SIGKILL if it is still running
 * after `graceMs`. Resolves at once for a process that has already exited (or never started).
 */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000) {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const killer = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(killer);
}

/** Stops every process in `processes` at once. */
export async function stopEach(processes: Iterable<LaunchedProcess>): Promise<void> {
  await Promise.all([...processes].map((p) => p.stop()));
}

function readLogTail(file: string): string[] {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, 16_384);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      return buffer.toString('utf8').split('\n').filter(Boolean);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  }
}

/** Starts a process and resolves once it is ready, with what its readiness returned. */
export async function launch<T>(opts: LaunchOptions<T>): Promise<LaunchedProcess & { ready: T }> {
  const [file, args] = commandLine(opts);
  const env: NodeJS.ProcessEnv = { ...(opts.isolatedEnv ? {} : process.env), ...opts.env };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];

  const logFd = opts.logFile === undefined ? undefined : fs.openSync(opts.logFile, 'a');
  if (logFd !== undefined && opts.runAs) fs.fchownSync(logFd, opts.runAs.uid, opts.runAs.gid);
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      cwd: opts.cwd ?? repoRoot,
      env,
      ...opts.runAs,
      stdio: ['ignore', logFd ?? 'pipe', logFd ?? 'pipe'],
    });
  } finally {
    if (logFd !== undefined) fs.closeSync(logFd);
  }
  if (child.pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`${opts.name} could not be started (${file}): ${error.message}`);
  }

  const kept: string[] = [];
  const readyLines: Array<(line: string) => void> = [];
  const streamClosed: Array<Promise<void>> = [];
  const read = (stream: NodeJS.ReadableStream | null, echoTo: NodeJS.WritableStream | null, isStdout: boolean) => {
    if (!stream) return;
    const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
    streamClosed.push(new Promise((resolve) => lines.once('close', resolve)));
    lines.on('line', (line) => {
      kept.push(line);
      if (kept.length > KEPT_LINES) kept.shift();
      echoTo?.write(`${opts.prefix ?? ''}${line}\n`);
      opts.onLine?.(line, isStdout ? 'stdout' : 'stderr');
      if (isStdout) for (const listener of readyLines) listener(line);
    });
  };
  const echo = opts.echo ?? 'none';
  read(child.stdout, echo === 'all' ? process.stdout : null, true);
  read(child.stderr, echo === 'none' ? null : process.stderr, false);

  const exited = new Promise<ExitStatus>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let stopping: Promise<void> | undefined;
  const handle: LaunchedProcess = {
    name: opts.name,
    pid: child.pid,
    child,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => (opts.logFile === undefined ? kept : readLogTail(opts.logFile)).slice(-QUOTED_LINES).join('\n'),
    stop: () => (stopping ??= stopChild(child, opts.stopSignal ?? 'SIGTERM', opts.graceMs ?? 15_000)),
    kill: () => stopChild(child, 'SIGKILL'),
  };
  if (opts.track) {
    const track = opts.track;
    track.add(handle);
    void exited.then(() => track.delete(handle));
  }

  const failure = (what: string) => {
    const output = handle.output();
    const where = opts.logFile === undefined ? '' : ` (log: ${opts.logFile})`;
    return new Error(`${opts.name} ${what}${where}${output ? `; its last output:\n${output}` : ''}`);
  };
  const timeoutMs = opts.timeoutMs ?? 120_000;
  try {
    const value = await new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = (done: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        readyLines.length = 0;
        done();
      };
      const timer = setTimeout(() => settle(() => reject(failure(`was not ready within ${timeoutMs} ms`))), timeoutMs);
      void exited.then(async ({ code, signal }) => {
        if (settled) return;
        // 'exit' can come before the last output has been read; wait a moment for the pipes to drain.
        await Promise.race([Promise.all(streamClosed), new Promise((r) => setTimeout(r, 200))]);
        settle(() => reject(failure(`exited (${signal ?? code}) before it was ready`)));
      });
      const ready = opts.ready;
      if ('line' in ready) {
        readyLines.push((line) => {
          const value = ready.line(line);
          if (value !== undefined) settle(() => resolve(value));
        });
        return;
      }
      void (async () => {
        while (!settled) {
          const value = await ready.check().catch(() => undefined);
          if (value !== undefined) return settle(() => resolve(value));
          await new Promise((r) => setTimeout(r, ready.intervalMs ?? 100));
        }
      })();
    });
    return { ...handle, ready: value };
  } catch (err) {
    await handle.stop();
    throw err;
  }
}
