/**
 * The sandbox the Data Science agent's generated pandas code runs in.
 *
 * Each run is a separate Python process confined by bubblewrap (see bwrap.ts: no network,
 * read-only everything but a private size-capped /tmp, data handed in as files, empty environment,
 * unprivileged uid) and by limits it applies to itself before the code runs
 * (gates-py/sandbox/confine.py: CPU, memory, threads, file size, and a seccomp filter that kills
 * the process on any attempt to start a program or open a network socket). The caller adds the
 * wall-clock limit and the output cap. Without bubblewrap no code runs: `SandboxUnavailableError`.
 *
 * The process starts warm (`warm`, AMY_SANDBOX_WARM), since a fresh interpreter spends most of a run
 * importing pandas: as root it is forked from the sandbox's fork server, which imported pandas once,
 * and confines itself as a fresh one is confined before the code runs (fork-server.ts,
 * gates-py/sandbox/zygote.py); otherwise it is a one-shot interpreter started ahead of its run (pool.ts).
 * Either way one process runs one analysis and exits. `off` is a fresh interpreter per run.
 *
 * At most `concurrency` runs (preflights included) go at once in one sandbox, that is one worker; the
 * rest wait their turn (slots.ts). Each run's process limit is its own (see `identity` in bwrap.ts):
 * as root its uid is leased host-wide (uids.ts). Its directory on the host is its own by lock, under
 * a private directory every worker on the host shares (run-dir.ts).
 *
 * A caller that gives up passes an AbortSignal (the activity's cancellation: the turn was cancelled,
 * or the attempt timed out or was superseded by its retry): a waiting run leaves the queue without
 * ever starting, a running one is killed and its directory removed, and the call rejects with the
 * signal's reason.
 *
 * Nothing here logs: the code, the data and the output are the user's.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  bwrapArgs,
  MAX_SANDBOX_SLOTS,
  pythonLayout,
  SANDBOX_INPUT_DIR,
  sandboxUid,
  SANDBOX_RUNNER_DIR,
  type PythonLayout,
  type SandboxMounts,
} from './bwrap';
import { findBwrap } from './find-bwrap';
import { ForkServer } from './fork-server';
import { SparePool } from './pool';
import { runConfined, type ConfinedExit } from './process';
import { createRunDir, preparePrivateDir, SandboxDirError, sweepStaleRunDirs } from './run-dir';
import type { Sandbox, SandboxErrorKind, SandboxResult, WarmMode } from './sandbox';
import { Slots } from './slots';
import { traceSandbox } from './tracing';
import { leaseSandboxUid } from './uids';
import { wrapMethods } from '../method-wrappers';
import { metrics } from '../metrics';
import { PROJECT_ROOT } from '../project-root';

export { sweepStaleRunDirs } from './run-dir';
export { WARM_MODES, type Sandbox, type SandboxData, type SandboxErrorKind, type SandboxResult } from './sandbox';

export interface SandboxLimits {
  /** Wall-clock time of one run, start-up included. */
  wallMs: number;
  cpuSeconds: number;
  /** Address space of the sandboxed interpreter. */
  memoryMb: number;
  /** The most one run may write to stdout: its prints and its result together. */
  maxOutputBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  wallMs: 30_000,
  cpuSeconds: 20,
  memoryMb: 1024,
  maxOutputBytes: 1024 * 1024,
};

/** A syntax check needs a bare interpreter, not pandas, and no time at all. */
const PREFLIGHT_LIMITS: SandboxLimits = { wallMs: 10_000, cpuSeconds: 5, memoryMb: 512, maxOutputBytes: 1024 * 1024 };
/** The private /tmp; file writes are capped at the same size by RLIMIT_FSIZE. */
const SCRATCH_BYTES = 64 * 1024 * 1024;
/** The envelope's marker and framing around the result, over and above maxOutputBytes. */
const ENVELOPE_SLACK_BYTES = 1024;
const RUNNER_DIR = path.join(PROJECT_ROOT, 'gates-py', 'sandbox');
/** One run per core: a run is CPU-bound, and each may take `memoryMb` besides. */
export const DEFAULT_SANDBOX_CONCURRENCY = os.availableParallelism();
const ENVELOPE_MARKER = '\n@@amy-sandbox-envelope@@\n';

/**
 * The sandbox directory when `AMY_SANDBOX_DIR` is unset: one per user in the temporary directory, the
 * same for every worker of that user on the host (which is what makes uid leases host-wide). Its name
 * does not start with RUN_DIR_PREFIX, so no sweeper of a run directory parent takes it for a run's.
 */
export function defaultSandboxDir(): string {
  return path.join(os.tmpdir(), `amy-sandboxes-${process.getuid?.() ?? 'user'}`);
}

/** `fork` as root, `pool` otherwise. */
function defaultWarmMode(asRoot: boolean): WarmMode {
  return asRoot ? 'fork' : 'pool';
}

export interface SandboxOptions {
  /** The project's interpreter, e.g. `.venv/bin/python` (numpy, pandas, scipy). */
  python: string;
  limits?: Partial<SandboxLimits>;
  /** bubblewrap's path (`AMY_BWRAP_PATH`); when omitted, looked for as find-bwrap.ts says, in `bwrapEnv`. */
  bwrap?: string;
  /** Where `AMY_BWRAP_PATH` and PATH are read when `bwrap` is omitted; the process's environment by default. */
  bwrapEnv?: NodeJS.ProcessEnv;
  /** The most runs at once (`AMY_SANDBOX_CONCURRENCY`); `DEFAULT_SANDBOX_CONCURRENCY` by default. */
  concurrency?: number;
  /**
   * The sandbox directory (`AMY_SANDBOX_DIR`): the run directories and the uid lock files, made 0700
   * when missing, refused unless private (run-dir.ts); `defaultSandboxDir()` by default. Every worker
   * on a host must share it, or their uids may meet.
   */
  runDirParent?: string;
  /** How runs start (`AMY_SANDBOX_WARM`); `fork` as root, `pool` otherwise, by default. */
  warm?: WarmMode;
}

/** The sandbox cannot confine code on this machine, so no generated code is run at all. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

const envelopeSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('ok'), result: z.unknown() }),
  z.object({
    status: z.literal('error'),
    kind: z.enum(['exception', 'memory_limit', 'forbidden', 'output_too_large', 'unavailable']),
    message: z.string(),
    traceback: z.string().optional(),
    line: z.number().int().positive().optional(),
  }),
]);
type Envelope = z.infer<typeof envelopeSchema>;

const preflightSchema = z.union([
  z.object({ ok: z.literal(true), code: z.string(), autoFixed: z.boolean() }),
  z.object({
    ok: z.literal(false),
    error: z.object({ line: z.number().int(), col: z.number().int(), message: z.string() }),
  }),
]);

/** The envelope the runner wrote last on stdout, and what was printed before it. */
function readEnvelope(stdout: string): { envelope: Envelope; printed: string } | null {
  const at = stdout.lastIndexOf(ENVELOPE_MARKER);
  if (at < 0) return null;
  try {
    const envelope = envelopeSchema.parse(JSON.parse(stdout.slice(at + ENVELOPE_MARKER.length)));
    return { envelope, printed: stdout.slice(0, at) };
  } catch {
    return null;
  }
}

const signalName = (code: number) =>
  Object.entries(os.constants.signals).find(([, number]) => number === code)?.[0] ?? `signal ${code}`;

const tail = (text: string, max = 2000) => (text.length <= max ? text : '…' + text.slice(-max)).trim();

/** What a finished run means, in the caller's terms. */
function outcome(exit: ConfinedExit, limits: SandboxLimits): SandboxResult {
  const { durationMs } = exit;
  const failure = (kind: SandboxErrorKind, message: string): SandboxResult => ({
    status: 'error',
    kind,
    message,
    durationMs,
  });
  if (exit.outputExceeded) {
    return failure('output_too_large', `the code wrote more than ${limits.maxOutputBytes} bytes`);
  }
  if (exit.timedOut) return failure('timeout', `the code ran longer than ${limits.wallMs} ms and was killed`);
  if (exit.lost) return failure('crashed', exit.lost);
  if (exit.code === 0) {
    const read = readEnvelope(exit.stdout);
    if (read?.envelope.status === 'ok') {
      return { status: 'ok', result: read.envelope.result, stdout: read.printed, durationMs };
    }
    if (read?.envelope.status === 'error') {
      const { kind, message, traceback, line } = read.envelope;
      if (kind === 'unavailable') throw new SandboxUnavailableError(message);
      return { status: 'error', kind, message, traceback, line, durationMs };
    }
  }
  // bwrap reports a child killed by signal N as exit status 128 + N.
  const signal = exit.code !== null && exit.code > 128 ? signalName(exit.code - 128) : exit.signal;
  if (signal === 'SIGSYS') {
    return failure(
      'forbidden',
      'the code tried something the sandbox forbids (starting a program, a network socket, …)',
    );
  }
  if (signal === 'SIGXCPU') return failure('cpu_limit', `the code used more than ${limits.cpuSeconds} s of CPU`);
  if (signal) return failure('crashed', `the code was killed by ${signal}`);
  const stderr = tail(exit.stderr);
  return failure('crashed', `the sandboxed process exited with status ${exit.code}${stderr ? `: ${stderr}` : ''}`);
}

interface Mechanism {
  bwrap: string;
  python: PythonLayout;
  /** The warm path as root (fork mode), started with the first run. */
  forkServer?: ForkServer;
  /** The warm path otherwise (pool mode): a pre-started process per slot. */
  pool?: SparePool;
}

/**
 * Times a sandbox call, its wait for a slot included, and counts how it ended (platform/metrics.ts): what
 * `outcomeOf` says of its result, or `aborted` (the caller gave up), `unavailable` (no sandbox here) or
 * `failed` (anything else thrown).
 */
function measured<T>(
  operation: 'run' | 'preflight',
  signal: AbortSignal | undefined,
  call: () => Promise<T>,
  outcomeOf: (result: T) => string,
): Promise<T> {
  const ended = metrics.sandboxStarted(operation);
  return call().then(
    (result) => {
      ended(outcomeOf(result));
      return result;
    },
    (err: unknown) => {
      ended(signal?.aborted ? 'aborted' : err instanceof SandboxUnavailableError ? 'unavailable' : 'failed');
      throw err;
    },
  );
}

/** The sandbox with each call measured: a run by its result's status or error kind, a syntax check by its verdict. */
function measuredSandbox(sandbox: Sandbox): Sandbox {
  return wrapMethods(sandbox, {
    preflight: (preflight, _code, options) =>
      measured('preflight', options?.signal, preflight, (result) => (result.ok ? 'ok' : 'syntax_error')),
    run: (run, input) => measured('run', input.signal, run, (result) => (result.status === 'ok' ? 'ok' : result.kind)),
  });
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  const runDirParent = options.runDirParent ?? defaultSandboxDir();
  const asRoot = process.getuid?.() === 0;
  const slots = new Slots(Math.min(options.concurrency ?? DEFAULT_SANDBOX_CONCURRENCY, MAX_SANDBOX_SLOTS));
  const asked = options.warm ?? defaultWarmMode(asRoot);
  const warm: WarmMode = asked === 'fork' && !asRoot ? 'pool' : asked;
  let available: Promise<Mechanism> | null = null;

  async function confined(
    mechanism: Mechanism,
    command: string[],
    commandLimits: SandboxLimits,
    { slot, uid, inputDir, signal }: { slot: number; uid: number; inputDir: string; signal?: AbortSignal },
  ): Promise<ConfinedExit> {
    const argv = [
      ...command,
      `--cpu-seconds=${commandLimits.cpuSeconds}`,
      `--memory-mb=${commandLimits.memoryMb}`,
      `--max-output-bytes=${commandLimits.maxOutputBytes}`,
    ];
    const wallMs = commandLimits.wallMs;
    const maxStdoutBytes = commandLimits.maxOutputBytes + ENVELOPE_SLACK_BYTES;
    if (mechanism.forkServer) {
      const runDir = path.basename(path.dirname(inputDir));
      return mechanism.forkServer.run({ slot, uid, runDir, argv, wallMs, maxStdoutBytes, signal });
    }
    const mounts: SandboxMounts = {
      python: mechanism.python,
      runnerDir: RUNNER_DIR,
      inputDir,
      scratchBytes: SCRATCH_BYTES,
    };
    const runner = [mechanism.python.executable, '-s', '-B', `${SANDBOX_RUNNER_DIR}/runner.py`, ...argv];
    return runConfined(mechanism.bwrap, bwrapArgs(mounts, runner, { asRoot, uid }), { wallMs, maxStdoutBytes, signal });
  }

  /** The fork server for this sandbox's slots: zygote.py under bwrap, seeing every run directory at /runs. */
  function forkServer(bwrap: string, python: PythonLayout): ForkServer {
    const mounts: SandboxMounts = { python, runnerDir: RUNNER_DIR, runsDir: runDirParent, scratchBytes: SCRATCH_BYTES };
    const zygote = [
      python.executable,
      '-s',
      '-B',
      `${SANDBOX_RUNNER_DIR}/zygote.py`,
      '--slots',
      String(slots.limit),
      '--scratch-bytes',
      String(SCRATCH_BYTES),
    ];
    return new ForkServer({ bwrap, args: bwrapArgs(mounts, zygote, { asRoot }), slots: slots.limit });
  }

  /** The spares for pool mode: runner.py `serve` under a cold run's bwrap command line, without /input. */
  function sparePool(bwrap: string, python: PythonLayout): SparePool {
    const mounts: SandboxMounts = { python, runnerDir: RUNNER_DIR, scratchBytes: SCRATCH_BYTES };
    const serve = [
      python.executable,
      '-s',
      '-B',
      `${SANDBOX_RUNNER_DIR}/runner.py`,
      'serve',
      `--cpu-seconds=${limits.cpuSeconds}`,
      `--memory-mb=${limits.memoryMb}`,
      `--max-output-bytes=${limits.maxOutputBytes}`,
    ];
    return new SparePool(bwrap, {
      args: (uid) => bwrapArgs(mounts, serve, { asRoot, uid }),
      lease: (slot) => (asRoot ? leaseSandboxUid(runDirParent, slot, { unref: true }) : Promise.resolve(null)),
      unleased: (slot) => sandboxUid(slot, false),
    });
  }

  /** Proves, once, that the whole chain works here: bwrap, the uid switch, seccomp, pandas under the limits. */
  async function probe(): Promise<Mechanism> {
    try {
      await preparePrivateDir(runDirParent);
      await sweepStaleRunDirs(runDirParent);
    } catch (err) {
      if (!(err instanceof SandboxDirError)) throw err;
      // No path in the message: it reaches the user's stream as the analysis's failure.
      throw new SandboxUnavailableError(
        `${err.message}: AMY_SANDBOX_DIR must be a directory of the worker's own user, mode 0700, not a symbolic link`,
      );
    }
    const lookupEnv = options.bwrap ? { AMY_BWRAP_PATH: options.bwrap } : (options.bwrapEnv ?? process.env);
    const bwrap = findBwrap(lookupEnv)?.path;
    if (!bwrap) {
      // No path in the message: it reaches the user's stream as the analysis's failure.
      const where = lookupEnv.AMY_BWRAP_PATH ? ' where AMY_BWRAP_PATH says' : '';
      throw new SandboxUnavailableError(
        `bubblewrap (bwrap) is not installed${where}, so generated code cannot be confined (Debian: apt-get install bubblewrap)`,
      );
    }
    try {
      // Every run needs a locked directory: flock(1) missing would otherwise fail each run obscurely.
      const { dir, lock } = await createRunDir(runDirParent);
      await fs.rm(dir, { recursive: true, force: true });
      await lock.release();
    } catch {
      throw new SandboxUnavailableError(
        'a run directory cannot be made and locked (flock, from util-linux, is needed: apt-get install util-linux)',
      );
    }
    let python: PythonLayout;
    try {
      python = await pythonLayout(options.python);
    } catch (err) {
      throw new SandboxUnavailableError(`the sandbox interpreter ${options.python} does not start: ${String(err)}`);
    }
    const mechanism: Mechanism = {
      bwrap,
      python,
      forkServer: warm === 'fork' ? forkServer(bwrap, python) : undefined,
      pool: warm === 'pool' ? sparePool(bwrap, python) : undefined,
    };
    let exit: ConfinedExit;
    try {
      exit = await inSlot({}, (slot, uid, inputDir) => confined(mechanism, ['probe'], limits, { slot, uid, inputDir }));
    } catch (err) {
      mechanism.forkServer?.close();
      throw new SandboxUnavailableError(`bubblewrap (${bwrap}) cannot be started: ${String(err)}`);
    }
    const read = exit.code === 0 ? readEnvelope(exit.stdout) : null;
    if (read?.envelope.status !== 'ok') {
      mechanism.forkServer?.close();
      const reason =
        read?.envelope.status === 'error'
          ? read.envelope.message
          : exit.lost || tail(exit.stderr) || `status ${exit.code}`;
      throw new SandboxUnavailableError(`the sandbox does not work on this machine: ${reason}`);
    }
    return mechanism;
  }

  function ensureAvailable(): Promise<Mechanism> {
    // Cached when it works; a failure is retried on the next call (bubblewrap may have been installed since).
    available ??= probe().catch((err: unknown) => {
      available = null;
      throw err;
    });
    return available;
  }

  /**
   * Runs `use` in a slot, as a uid no other run on the host has (as root), with the run's input files
   * in a directory of its own. The run directory is private (0700); only its input subdirectory, bound
   * read-only, is readable by the sandbox uid, and it is removed whatever happens to the run. The run
   * holds its lock for its whole life, so a sweeper in another worker never takes it for stale. An
   * abort of `signal` before the slot is free means none of this happens at all.
   */
  async function inSlot<T>(
    files: Record<string, string>,
    use: (slot: number, uid: number, inputDir: string) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    return slots.with(async (slot) => {
      signal?.throwIfAborted();
      const lease = asRoot ? await leaseSandboxUid(runDirParent, slot) : null;
      try {
        const { dir: runDir, lock } = await createRunDir(runDirParent);
        try {
          const inputDir = path.join(runDir, 'input');
          await fs.mkdir(inputDir, { mode: 0o755 });
          await fs.chmod(inputDir, 0o755);
          for (const [name, content] of Object.entries(files)) {
            await fs.writeFile(path.join(inputDir, name), content, { mode: 0o644 });
          }
          return await use(slot, lease?.uid ?? sandboxUid(slot, false), inputDir);
        } finally {
          await fs.rm(runDir, { recursive: true, force: true });
          await lock.release();
        }
      } finally {
        // After the process is gone (runConfined settles on its close): the uid is free for another run.
        await lease?.release();
      }
    }, signal);
  }

  // Traced outside, measured inside: the span covers the same run the histogram does.
  return traceSandbox(
    measuredSandbox({
      get load() {
        return slots.load;
      },
      warm,

      async close() {
        const mechanism = await available?.catch(() => null);
        available = null;
        mechanism?.forkServer?.close();
        mechanism?.pool?.close();
      },

      async preflight(code, { signal } = {}) {
        const mechanism = await ensureAvailable();
        return inSlot(
          { 'code.py': code },
          async (slot, uid, inputDir) => {
            const exit = await confined(mechanism, ['preflight', `${SANDBOX_INPUT_DIR}/code.py`], PREFLIGHT_LIMITS, {
              slot,
              uid,
              inputDir,
              signal,
            });
            const result = outcome(exit, PREFLIGHT_LIMITS);
            if (result.status === 'ok') return preflightSchema.parse(result.result);
            return { ok: false, error: { line: 1, col: 1, message: `the syntax check failed: ${result.message}` } };
          },
          signal,
        );
      },

      async run({ code, data, signal }) {
        const mechanism = await ensureAvailable();
        const files = {
          'code.py': code,
          'summary.json': JSON.stringify(data.summary),
          'activities.json': JSON.stringify(data.activities),
          'labs.json': JSON.stringify(data.labs ?? []),
          'profile.json': JSON.stringify(data.profile),
        };
        const { pool } = mechanism;
        if (pool) {
          // The input goes down the spare's stdin: no run directory, and the spare's uid is its own lease.
          const input = JSON.stringify(files);
          const maxStdoutBytes = limits.maxOutputBytes + ENVELOPE_SLACK_BYTES;
          return slots.with(
            async (slot) =>
              outcome(await pool.run(slot, input, { wallMs: limits.wallMs, maxStdoutBytes, signal }), limits),
            signal,
          );
        }
        return inSlot(
          files,
          async (slot, uid, inputDir) =>
            outcome(
              await confined(mechanism, ['run', SANDBOX_INPUT_DIR], limits, { slot, uid, inputDir, signal }),
              limits,
            ),
          signal,
        );
      },
    }),
  );
}
