/**
 * The sandbox the Data Science agent's generated pandas code runs in.
 *
 * Each run is a separate Python process confined by bubblewrap (see sandbox-bwrap.ts: no network,
 * read-only everything but a private size-capped /tmp, data handed in as files, empty environment,
 * unprivileged uid) and by limits it applies to itself before the code runs
 * (gates-py/sandbox/confine.py: CPU, memory, threads, file size, and a seccomp filter that kills
 * the process on any attempt to start a program or open a network socket). The caller adds the
 * wall-clock limit and the output cap. Without bubblewrap no code runs: `SandboxUnavailableError`.
 *
 * Nothing here logs: the code, the data and the output are the user's.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { DailyRow, HealthProfileRow, WorkoutRow } from './health-data/records';
import {
  bwrapArgs,
  findBwrap,
  pythonLayout,
  SANDBOX_INPUT_DIR,
  SANDBOX_RUNNER_DIR,
  type PythonLayout,
  type SandboxMounts,
} from './sandbox-bwrap';
import { runConfined, type ConfinedExit } from './sandbox-process';

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
const RUNNER_DIR = path.resolve(__dirname, '../gates-py/sandbox');
const ENVELOPE_MARKER = '\n@@amy-sandbox-envelope@@\n';

export interface SandboxOptions {
  /** The project's interpreter, e.g. `.venv/bin/python` (numpy, pandas, scipy). */
  python: string;
  limits?: Partial<SandboxLimits>;
  /** bubblewrap's path; found on PATH when omitted. */
  bwrap?: string;
}

export interface SandboxData {
  summary: DailyRow[];
  activities: WorkoutRow[];
  /** null when the user has no profile: `profile_df` is then empty. */
  profile: HealthProfileRow | null;
}

export type SandboxErrorKind =
  'exception' | 'timeout' | 'cpu_limit' | 'memory_limit' | 'forbidden' | 'crashed' | 'output_too_large';

export type SandboxResult =
  | { status: 'ok'; result: unknown; stdout: string; durationMs: number }
  | {
      status: 'error';
      kind: SandboxErrorKind;
      message: string;
      /** The generated code's own frames only, with its line numbers. */
      traceback?: string;
      /** The line of the generated code the error points at, when there is one. */
      line?: number;
      durationMs: number;
    };

export type PreflightResult =
  { ok: true; code: string; autoFixed: boolean } | { ok: false; error: { line: number; col: number; message: string } };

export interface Sandbox {
  /** Syntax check, repairing the commonest indentation slip; run `code` from the answer. */
  preflight(code: string): Promise<PreflightResult>;
  run(input: { code: string; data: SandboxData }): Promise<SandboxResult>;
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
}

const RUN_DIR_NAME = /^amy-sandbox-(\d+)-/;

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but someone else's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A worker killed mid-run (SIGKILL, OOM) cannot remove its run directory, which holds a copy of the
 * user's data. The next sandbox in any process removes the directories whose owning process is gone.
 */
export async function sweepStaleRunDirs(tmpDir = os.tmpdir()): Promise<void> {
  let names: string[];
  try {
    names = await fs.readdir(tmpDir);
  } catch {
    return;
  }
  await Promise.all(
    names.map(async (name) => {
      const pid = Number(RUN_DIR_NAME.exec(name)?.[1]);
      if (!pid || processIsAlive(pid)) return;
      await fs.rm(path.join(tmpDir, name), { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  let available: Promise<Mechanism> | null = null;

  async function confined(
    mechanism: Mechanism,
    command: string[],
    commandLimits: SandboxLimits,
    inputDir?: string,
  ): Promise<ConfinedExit> {
    const mounts: SandboxMounts = {
      python: mechanism.python,
      runnerDir: RUNNER_DIR,
      inputDir,
      scratchBytes: SCRATCH_BYTES,
    };
    const runner = [
      mechanism.python.executable,
      '-s',
      '-B',
      `${SANDBOX_RUNNER_DIR}/runner.py`,
      ...command,
      `--cpu-seconds=${commandLimits.cpuSeconds}`,
      `--memory-mb=${commandLimits.memoryMb}`,
      `--max-output-bytes=${commandLimits.maxOutputBytes}`,
    ];
    return runConfined(mechanism.bwrap, bwrapArgs(mounts, runner), {
      wallMs: commandLimits.wallMs,
      maxStdoutBytes: commandLimits.maxOutputBytes + ENVELOPE_SLACK_BYTES,
    });
  }

  /** Proves, once, that the whole chain works here: bwrap, the uid switch, seccomp, pandas under the limits. */
  async function probe(): Promise<Mechanism> {
    await sweepStaleRunDirs();
    const bwrap = options.bwrap ?? findBwrap();
    if (!bwrap) {
      throw new SandboxUnavailableError(
        'bubblewrap (bwrap) is not installed, so generated code cannot be confined (Debian: apt-get install bubblewrap)',
      );
    }
    let python: PythonLayout;
    try {
      python = await pythonLayout(options.python);
    } catch (err) {
      throw new SandboxUnavailableError(`the sandbox interpreter ${options.python} does not start: ${String(err)}`);
    }
    const mechanism = { bwrap, python };
    let exit: ConfinedExit;
    try {
      exit = await confined(mechanism, ['probe'], limits);
    } catch (err) {
      throw new SandboxUnavailableError(`bubblewrap (${bwrap}) cannot be started: ${String(err)}`);
    }
    const read = exit.code === 0 ? readEnvelope(exit.stdout) : null;
    if (read?.envelope.status !== 'ok') {
      const reason =
        read?.envelope.status === 'error' ? read.envelope.message : tail(exit.stderr) || `status ${exit.code}`;
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

  async function withInputDir<T>(files: Record<string, string>, use: (dir: string) => Promise<T>): Promise<T> {
    // The run directory is private (0700); only its input subdirectory, bound read-only, is readable
    // by the sandbox uid, and it is removed whatever happens to the run.
    // The pid in the name tells whose run it was (and, once that process is gone, that it is stale).
    const runDir = await fs.mkdtemp(path.join(os.tmpdir(), `amy-sandbox-${process.pid}-`));
    try {
      const inputDir = path.join(runDir, 'input');
      await fs.mkdir(inputDir, { mode: 0o755 });
      await fs.chmod(inputDir, 0o755);
      for (const [name, content] of Object.entries(files)) {
        await fs.writeFile(path.join(inputDir, name), content, { mode: 0o644 });
      }
      return await use(inputDir);
    } finally {
      await fs.rm(runDir, { recursive: true, force: true });
    }
  }

  return {
    async preflight(code) {
      const mechanism = await ensureAvailable();
      return withInputDir({ 'code.py': code }, async (inputDir) => {
        const exit = await confined(
          mechanism,
          ['preflight', `${SANDBOX_INPUT_DIR}/code.py`],
          PREFLIGHT_LIMITS,
          inputDir,
        );
        const result = outcome(exit, PREFLIGHT_LIMITS);
        if (result.status === 'ok') return preflightSchema.parse(result.result);
        return { ok: false, error: { line: 1, col: 1, message: `the syntax check failed: ${result.message}` } };
      });
    },

    async run({ code, data }) {
      const mechanism = await ensureAvailable();
      const files = {
        'code.py': code,
        'summary.json': JSON.stringify(data.summary),
        'activities.json': JSON.stringify(data.activities),
        'profile.json': JSON.stringify(data.profile),
      };
      return withInputDir(files, async (inputDir) => {
        const exit = await confined(mechanism, ['run', SANDBOX_INPUT_DIR], limits, inputDir);
        return outcome(exit, limits);
      });
    },
  };
}
