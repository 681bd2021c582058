/**
 * The warm sandbox as root: one fork server (gates-py/sandbox/zygote.py) per sandbox, that is per
 * worker, which has imported pandas once and forks one child per run. See zygote.py for what each
 * child does to itself before the code runs (the run's leased uid for good, its own mount namespace
 * with its own scratch tmpfs and only its own input, every capability and descriptor gone, then
 * runner.py's rlimits and seccomp); a child runs one analysis and exits.
 *
 * The zygote runs under bwrap with the namespaces, mounts and environment of a cold run, as uid 0 with
 * the few capabilities its children need and drop. The worker talks to it over its stdin and stdout
 * (one JSON object per line: run, kill; started, exited), and gives it two pipes per concurrency slot,
 * which become a child's stdout and stderr: a run's output goes from the child to the worker without
 * passing through the zygote, so the zygote's memory, which every later child inherits, never holds a
 * user's output. A run's output ends with a marker the zygote writes once the child is gone, made at
 * that moment so no run can forge it.
 *
 * The caller's part is as for a cold run (process.ts): the wall clock, the output cap and its abort
 * each send a kill for that run, and the run settles once its child is gone. If the zygote itself dies,
 * every run in it ends as `lost` (reported `crashed`), its children die with its pid namespace, and the
 * next run starts a new zygote.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { z } from 'zod';
import type { ConfinedExit } from './process';

export interface ForkJob {
  /** The concurrency slot the run holds: its pipes to the zygote are that slot's. */
  slot: number;
  /** The host uid the child switches to (the run's lease, uids.ts). */
  uid: number;
  /** The run directory's name under the sandbox directory; its `input` becomes the child's /input. */
  runDir: string;
  /** runner.py's arguments. */
  argv: string[];
  wallMs: number;
  maxStdoutBytes: number;
  signal?: AbortSignal;
}

const STDERR_LIMIT = 16 * 1024;
/** The end-of-run marker zygote.py writes: `\n@@amy-sandbox-end-` + 32 hex digits + `@@\n`. */
const MARKER_BYTES = '\n@@amy-sandbox-end-'.length + 32 + '@@\n'.length;
/** After a kill, how long the zygote may take to report the child gone before the zygote itself is killed. */
const KILL_GRACE_MS = 2_000;
/** The zygote's start-up: bwrap, the interpreter and the pandas import (about a second here). */
const READY_TIMEOUT_MS = 60_000;

const reportSchema = z.union([
  z.object({ ready: z.literal(true) }),
  z.object({ job: z.number().int(), pid: z.number().int() }),
  z.object({
    job: z.number().int(),
    code: z.number().int().nullable(),
    signal: z.string().nullable(),
    marker: z.string(),
  }),
]);

/** One stream of a run's output: what it keeps, and the last bytes, where the end marker will be. */
class Collected {
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  total = 0;
  private tail = Buffer.alloc(0);

  constructor(private readonly keep: number) {}

  add(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.keptBytes < this.keep) {
      const part = chunk.subarray(0, this.keep - this.keptBytes);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    this.tail = Buffer.concat([this.tail, chunk]).subarray(-MARKER_BYTES);
  }

  endsWith(marker: Buffer): boolean {
    return this.tail.equals(marker);
  }

  /** What the run wrote, without the marker. */
  text(): string {
    const content = Math.max(0, this.total - MARKER_BYTES);
    return Buffer.concat(this.kept).subarray(0, content).toString('utf8');
  }
}

interface Running {
  job: ForkJob;
  stdout: Collected;
  stderr: Collected;
  started: number;
  timedOut: boolean;
  killed: boolean;
  exit?: { code: number | null; signal: string | null; marker: Buffer };
  pid?: number;
  timers: NodeJS.Timeout[];
  /** Asks the zygote to kill the child (once); the run settles when the zygote reports it gone. */
  kill: () => void;
  finish: (exit: ConfinedExit | null, lost?: string) => void;
}

/** A started zygote: its process, and the runs in it by job number and by slot. */
interface Zygote {
  child: ChildProcess;
  control: Writable;
  ready: Promise<void>;
  runs: Map<number, Running>;
  bySlot: Map<number, Running>;
  dead: boolean;
}

export interface ForkServerOptions {
  bwrap: string;
  /** bwrap's arguments that start zygote.py for `slots` slots. */
  args: string[];
  slots: number;
}

export class ForkServer {
  private zygote: Zygote | null = null;
  private nextJob = 1;

  constructor(private readonly options: ForkServerOptions) {}

  /** The zygote's bwrap process id while one runs (for tests). */
  get pid(): number | undefined {
    return this.zygote && !this.zygote.dead ? this.zygote.child.pid : undefined;
  }

  /**
   * Runs one job in a child of the zygote (started first when there is none). Resolves with how the
   * child ended once it is gone; rejects with `signal`'s reason when the caller gave up (the child is
   * killed first), or with an Error when no zygote can be started.
   */
  async run(job: ForkJob): Promise<ConfinedExit> {
    job.signal?.throwIfAborted();
    const zygote = this.current();
    await abortable(zygote.ready, job.signal);
    if (zygote.dead) return lostExit('the sandbox fork server stopped before the run started', 0);
    return new Promise((resolve, reject) => {
      const number = this.nextJob++;
      const started = performance.now();
      const run: Running = {
        job,
        stdout: new Collected(job.maxStdoutBytes + MARKER_BYTES),
        stderr: new Collected(STDERR_LIMIT + MARKER_BYTES),
        started,
        timedOut: false,
        killed: false,
        timers: [],
        kill: () => {
          if (run.killed) return;
          run.killed = true;
          send(zygote, { op: 'kill', job: number });
          // A zygote that cannot kill its child in time is killed itself, with all of it.
          run.timers.push(setTimeout(() => killGroup(zygote.child), KILL_GRACE_MS));
        },
        finish: (exit, lost) => {
          for (const timer of run.timers) clearTimeout(timer);
          job.signal?.removeEventListener('abort', run.kill);
          zygote.runs.delete(number);
          if (zygote.bySlot.get(job.slot) === run) zygote.bySlot.delete(job.slot);
          if (job.signal?.aborted) reject(job.signal.reason as Error);
          else resolve(exit ?? lostExit(lost ?? 'the sandbox fork server stopped', started, run.timedOut));
        },
      };
      run.timers.push(
        setTimeout(() => {
          run.timedOut = true;
          run.kill();
        }, job.wallMs),
      );
      job.signal?.addEventListener('abort', run.kill, { once: true });
      zygote.runs.set(number, run);
      zygote.bySlot.set(job.slot, run);
      send(zygote, { op: 'run', job: number, slot: job.slot, uid: job.uid, dir: job.runDir, argv: job.argv });
    });
  }

  /** Stops the zygote, and with it every run in it (they end as lost). */
  close(): void {
    if (this.zygote) killGroup(this.zygote.child);
  }

  private current(): Zygote {
    if (!this.zygote || this.zygote.dead) this.zygote = this.start();
    return this.zygote;
  }

  private start(): Zygote {
    const { bwrap, args, slots } = this.options;
    // An empty environment: bwrap needs none. Slot k's stdout and stderr are descriptors 3 + 2k and 4 + 2k.
    const child = spawn(bwrap, args, {
      env: {},
      stdio: ['pipe', 'pipe', 'pipe', ...Array.from({ length: 2 * slots }, () => 'pipe' as const)],
      detached: true,
    });
    const zygote: Zygote = {
      child,
      control: child.stdin!,
      ready: Promise.resolve(),
      runs: new Map(),
      bySlot: new Map(),
      dead: false,
    };
    // The zygote must not keep the worker (or a test) alive: a run in flight holds its own timers.
    child.unref();
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    child.stdin!.on('error', () => undefined);

    const startupErrors: Buffer[] = [];
    child.stderr!.on('data', (chunk: Buffer) => {
      if (Buffer.concat(startupErrors).length < STDERR_LIMIT) startupErrors.push(chunk);
    });
    for (let slot = 0; slot < slots; slot++) {
      const onData = (which: 'stdout' | 'stderr') => (chunk: Buffer) => {
        const run = zygote.bySlot.get(slot);
        if (!run) return;
        run[which].add(chunk);
        if (which === 'stdout' && run.stdout.total > run.job.maxStdoutBytes + MARKER_BYTES) run.kill();
        settleIfDone(run);
      };
      (child.stdio[3 + 2 * slot] as Readable).on('data', onData('stdout'));
      (child.stdio[4 + 2 * slot] as Readable).on('data', onData('stderr'));
    }

    let markReady: () => void = () => undefined;
    let failStart: (err: Error) => void = () => undefined;
    zygote.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    });
    // Nobody may be waiting yet; a failed start is reported to whoever waits next.
    zygote.ready.catch(() => undefined);
    const readyTimer = setTimeout(() => {
      failStart(new Error('the sandbox fork server did not start in time'));
      killGroup(child);
    }, READY_TIMEOUT_MS);

    let pending = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      pending += text;
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const report = reportSchema.safeParse(safeJson(line));
        if (!report.success) continue;
        const message = report.data;
        if ('ready' in message) {
          clearTimeout(readyTimer);
          markReady();
        } else if ('pid' in message) {
          const run = zygote.runs.get(message.job);
          if (run) run.pid = message.pid;
        } else {
          const run = zygote.runs.get(message.job);
          if (!run) continue;
          run.exit = { code: message.code, signal: message.signal, marker: Buffer.from(message.marker) };
          settleIfDone(run);
        }
      }
    });
    child.once('error', (err) => {
      clearTimeout(readyTimer);
      failStart(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(readyTimer);
      zygote.dead = true;
      const why = Buffer.concat(startupErrors).toString('utf8').trim().slice(-2000);
      failStart(new Error(`the sandbox fork server exited (${signal ?? `status ${code}`})${why ? `: ${why}` : ''}`));
      for (const run of [...zygote.runs.values()]) run.finish(null, 'the sandbox fork server stopped during the run');
    });
    return zygote;
  }
}

/** Settles `run` once its child is gone and both of its streams have ended with the marker. */
function settleIfDone(run: Running): void {
  const exit = run.exit;
  if (!exit || !run.stdout.endsWith(exit.marker) || !run.stderr.endsWith(exit.marker)) return;
  const stdoutBytes = run.stdout.total - MARKER_BYTES;
  run.finish({
    code: exit.code,
    signal: exit.signal as NodeJS.Signals | null,
    stdout: run.stdout.text(),
    stderr: run.stderr.text().slice(0, STDERR_LIMIT),
    timedOut: run.timedOut,
    outputExceeded: stdoutBytes > run.job.maxStdoutBytes,
    durationMs: Math.round(performance.now() - run.started),
  });
}

function lostExit(why: string, started: number, timedOut = false): ConfinedExit {
  return {
    code: null,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut,
    outputExceeded: false,
    durationMs: started ? Math.round(performance.now() - started) : 0,
    lost: why,
  };
}

function send(zygote: Zygote, message: Record<string, unknown>): void {
  if (!zygote.dead) zygote.control.write(JSON.stringify(message) + '\n');
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: already gone.
  }
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}
