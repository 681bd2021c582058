/**
 * The bridge to the Python gates (gates-py/gates, docs/design.md#the-seven-gates): a small pool
 * of long-lived `python -m gates` processes, so interpreter start-up and the numpy/scipy import are
 * paid once per process, not once per finding (ARCHITECTURE.md, "Python side").
 *
 * The same processes also build the series a finding is gated on from the user's rows (`buildSeries`),
 * so the composite features the sandbox adds to `summary_df`, and its `activities_df` and `labs_df`, have
 * one implementation.
 *
 * Requests and responses are JSON lines matched by id (see gates-py/gates/protocol.py). Each process
 * holds one request at a time; the others wait in the pool's queue, not behind a process. So a request
 * that outlives its timeout takes down only the process that ran it (the process is killed, since
 * Python cannot be interrupted mid-computation), fails only itself, and the queue goes on in the other
 * processes and in the one started to replace it. Processes start when there is work and none is free.
 *
 * A caller that gives up (its activity was cancelled, or timed out) passes an AbortSignal: a queued
 * request then leaves the queue unsent, and one in a process's hands takes that process down with it,
 * as a timeout does; either rejects with the signal's reason.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { z } from 'zod';
import {
  DATA_TABLES,
  type AgentFinding,
  findingSchema,
  findingSeriesSchema,
  gatesOutcomeSchema,
  type Finding,
} from '../../contracts/findings';
import { metrics } from '../metrics';
import { PROJECT_ROOT } from '../project-root';
import type { FindingSeriesSpec, GatesRunner, RequestOptions } from './gates-runner';
import { traceGates } from './tracing';

export type { FindingSeriesSpec, GatesRunner } from './gates-runner';

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Two at least, so one slow request never holds up every other user's; no more than the cores, since
 * a gates request is CPU-bound; four at most, since each process holds numpy and scipy (about 100 MB).
 */
export const DEFAULT_GATES_PROCESSES = Math.min(4, Math.max(2, os.availableParallelism()));
/** How long `close` lets the process finish the request in hand before killing it. */
const CLOSE_GRACE_MS = 2_000;
/** Enough of the process's stderr to explain a crash (a Python traceback) in the error message. */
const STDERR_TAIL_CHARS = 4_000;

/** `<repo>/.venv/bin/python`, the interpreter scripts/setup-python.mjs prepares (config's `AMY_PYTHON` overrides it). */
export function defaultPythonPath(): string {
  return path.join(PROJECT_ROOT, '.venv', 'bin', 'python');
}

export type GatesRunnerFailure =
  /** The series (or series specs) broke their contract; nothing was sent. */
  | 'invalid_input'
  /** The request outlived its timeout; the process running it was killed, and a new one replaces it. */
  | 'timeout'
  /** The process died (or was killed) with the request in hand. */
  | 'process_exited'
  /** The interpreter could not be started (wrong path, no .venv). */
  | 'spawn_failed'
  /** The process answered something that is not a valid response to this request. */
  | 'protocol'
  /** The process refused the request itself (a gate failure is an outcome, never this). */
  | 'request_failed'
  | 'closed';

export class GatesRunnerError extends Error {
  override name = 'GatesRunnerError';

  constructor(
    message: string,
    readonly reason: GatesRunnerFailure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface GatesRunnerOptions {
  /** The Python interpreter with numpy and scipy, usually `defaultPythonPath()`. */
  python: string;
  /** The directory holding the `gates` package; `<repo>/gates-py` by default. */
  cwd?: string;
  /**
   * Per-request limit, 30 s by default, counted from when a process takes the request (the wait in the
   * queue is not the request's fault); the first request on a new process includes its start-up.
   */
  timeoutMs?: number;
  /** The most processes at once (`AMY_GATES_PROCESSES`), `DEFAULT_GATES_PROCESSES` by default. */
  processes?: number;
}

/** Which series a finding is judged on: its window, and the table (and workout type) its feature is in. */
export const seriesSpec = ({
  finding,
  windowDays,
  offsetDays,
  table,
  workoutType,
}: Pick<AgentFinding, 'finding' | 'windowDays' | 'offsetDays' | 'table' | 'workoutType'>): FindingSeriesSpec => ({
  finding,
  windowDays,
  ...(offsetDays ? { offsetDays } : {}),
  ...(table && table !== 'daily' ? { table } : {}),
  ...(workoutType ? { workoutType } : {}),
});

const findingSeriesSpecsSchema = z.array(
  z
    .object({
      finding: findingSchema,
      windowDays: z.number().int().positive().nullable(),
      offsetDays: z.number().int().nonnegative().optional(),
      table: z.enum(DATA_TABLES).optional(),
      workoutType: z.string().min(1).optional(),
    })
    .strict(),
);

const answerSchema = z.union([
  z.object({ id: z.string(), results: z.array(gatesOutcomeSchema) }).strict(),
  z
    .object({
      id: z.string(),
      series: z.array(z.object({ series: findingSeriesSchema, missing_columns: z.array(z.string()) }).strict()),
    })
    .strict(),
]);
/** What the process answers a request with, when it does not refuse it. */
type Answer = z.infer<typeof answerSchema>;

const responseSchema = z.union([answerSchema, z.object({ id: z.string().nullable(), error: z.string() }).strict()]);

/** An answer about other findings than those sent, or in another order, is a protocol error. */
function assertAnswersFindings(answeredIds: string[], sent: Array<{ finding: Finding }>): void {
  if (answeredIds.length !== sent.length || answeredIds.some((id, i) => id !== sent[i]!.finding.id)) {
    throw new GatesRunnerError('gates answer does not match the findings sent', 'protocol');
  }
}

function invalidInput(what: string, error: z.ZodError): GatesRunnerError {
  return new GatesRunnerError(`invalid ${what}:\n${z.prettifyError(error)}`, 'invalid_input', { cause: error });
}

/** A request waiting for a process, or in one's hands. */
interface Job {
  message: { id: string; [field: string]: unknown };
  timeoutMs: number;
  signal?: AbortSignal;
  accept(answer: Answer): void;
  /** A GatesRunnerError, or the signal's reason. */
  reject(err: unknown): void;
}

export function createGatesRunner(options: GatesRunnerOptions): GatesRunner {
  const cwd = options.cwd ?? path.join(PROJECT_ROOT, 'gates-py');
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxProcesses = options.processes ?? DEFAULT_GATES_PROCESSES;
  if (!Number.isInteger(maxProcesses) || maxProcesses < 1) {
    throw new RangeError(`processes must be a positive integer, not ${maxProcesses}`);
  }
  /** Every live process; those not in `busy` are free for the next job. */
  const live = new Set<GatesProcess>();
  const busy = new Set<GatesProcess>();
  const queue: Job[] = [];
  let closed = false;
  let nextId = 0;

  const ensureOpen = () => {
    if (closed) throw new GatesRunnerError('the gates runner is closed', 'closed');
  };

  /** Hands queued jobs to free processes, starting processes up to the pool's size. */
  const dispatch = () => {
    // A process that died while idle (killed, crashed) is dropped, and replaced if there is work.
    for (const gone of [...live].filter((p) => !p.running)) live.delete(gone);
    while (queue.length > 0) {
      let worker = [...live].find((candidate) => !busy.has(candidate));
      if (!worker && live.size < maxProcesses) {
        worker = new GatesProcess(options.python, cwd);
        live.add(worker);
      }
      if (!worker) return;
      const job = queue.shift()!;
      const taken = worker;
      busy.add(taken);
      const done = () => {
        busy.delete(taken);
        if (!taken.running) live.delete(taken);
        if (!closed) dispatch();
      };
      taken.request(job.message, job.timeoutMs, job.signal).then(
        (answer) => {
          done();
          job.accept(answer);
        },
        (err: unknown) => {
          done();
          job.reject(err);
        },
      );
    }
  };

  const send = <T>(
    op: 'gates' | 'series',
    body: Record<string, unknown>,
    { timeoutMs, signal }: RequestOptions = {},
    read: (answer: Answer) => T,
  ): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const ended = metrics.gatesRequestStarted(op);
      // While queued, an abort takes the job out unsent; once a process has it, GatesProcess handles it.
      const onAbort = () => {
        const at = queue.indexOf(job);
        if (at < 0) return;
        queue.splice(at, 1);
        ended('aborted');
        reject(signal!.reason as Error);
      };
      const job: Job = {
        message: { id: `${op}_${++nextId}`, op, ...body },
        timeoutMs: timeoutMs ?? defaultTimeoutMs,
        signal,
        accept: (answer) => {
          signal?.removeEventListener('abort', onAbort);
          try {
            resolve(read(answer));
            ended('ok');
          } catch (err) {
            ended('protocol');
            reject(err);
          }
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          ended(err instanceof GatesRunnerError ? err.reason : signal?.aborted ? 'aborted' : 'failed');
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(job);
      dispatch();
    });

  return traceGates({
    get pids() {
      return [...live].filter((p) => p.running && p.pid !== null).map((p) => p.pid!);
    },

    async run(series, runOptions) {
      ensureOpen();
      const parsed = z.array(findingSeriesSchema).safeParse(series);
      if (!parsed.success) throw invalidInput('finding series', parsed.error);
      if (parsed.data.length === 0) return [];
      return send('gates', { findings: parsed.data }, runOptions, (answer) => {
        if (!('results' in answer)) throw new GatesRunnerError('gates answer has no results', 'protocol');
        const answeredIds = answer.results.map((outcome) => outcome.finding_id);
        assertAnswersFindings(answeredIds, parsed.data);
        return answer.results;
      });
    },

    async buildSeries(data, specs, seriesOptions) {
      ensureOpen();
      const parsed = findingSeriesSpecsSchema.safeParse(specs);
      if (!parsed.success) throw invalidInput('finding series specs', parsed.error);
      if (parsed.data.length === 0) return [];
      const wireSpecs = parsed.data.map((spec) => ({
        finding: spec.finding,
        window_days: spec.windowDays,
        offset_days: spec.offsetDays ?? 0,
        ...(spec.table ? { table: spec.table } : {}),
        ...(spec.workoutType ? { workout_type: spec.workoutType } : {}),
      }));
      const request = { summary: data.daily, workouts: data.workouts ?? [], labs: data.labs ?? [], specs: wireSpecs };
      return send('series', request, seriesOptions, (answer) => {
        if (!('series' in answer)) throw new GatesRunnerError('gates answer has no series', 'protocol');
        const answeredIds = answer.series.map((built) => built.series.finding.id);
        assertAnswersFindings(answeredIds, parsed.data);
        return answer.series.map((built) => ({ series: built.series, missingColumns: built.missing_columns }));
      });
    },

    async close() {
      closed = true;
      const closing = new GatesRunnerError('the gates runner was closed', 'closed');
      for (const job of queue.splice(0)) job.reject(closing);
      await Promise.all([...live].map((p) => p.stop()));
      live.clear();
    },
  });
}

interface PendingRequest {
  accept(answer: Answer): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  /** Stops listening to the caller's signal. */
  unlisten(): void;
}

/**
 * One Python process and the request it has in hand (the pool gives it one at a time, though the
 * protocol would allow more). Once it stops running it is never reused.
 */
class GatesProcess {
  private alive = true;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<string, PendingRequest>();
  private readonly gone: Promise<void>;
  private stderrTail = '';

  constructor(python: string, cwd: string) {
    this.child = spawn(python, ['-m', 'gates'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.gone = new Promise((resolve) => {
      // 'close' rather than 'exit': it comes after stdout has been read to the end, so every answer
      // the process wrote before dying is delivered before its pending requests are failed.
      this.child.once('close', (code, signal) => {
        this.fail(
          new GatesRunnerError(
            `gates process ended (${signal ?? `exit code ${code}`})${this.tail()}`,
            'process_exited',
          ),
        );
        resolve();
      });
      this.child.once('error', (err) => {
        this.fail(new GatesRunnerError(`could not run ${python}: ${err.message}`, 'spawn_failed', { cause: err }));
        resolve();
      });
    });
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => this.receive(line));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // Writing to a process that just died fails with EPIPE; 'close' above reports that death.
    this.child.stdin.on('error', () => undefined);
  }

  get running(): boolean {
    return this.alive;
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  /**
   * Sends one request line and resolves with the process's answer to it. An abort of `signal` fails
   * the request with the signal's reason and, like a timeout, the process.
   */
  request(message: { id: string; [field: string]: unknown }, timeoutMs: number, signal?: AbortSignal): Promise<Answer> {
    const { id } = message;
    return new Promise((resolve, reject) => {
      if (!this.alive) {
        reject(new GatesRunnerError('gates process ended before the request was sent', 'process_exited'));
        return;
      }
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      // Python cannot be interrupted mid-computation: the process goes, and the pool replaces it.
      const giveUp = (err: unknown, why: string) => {
        this.settle(id)?.reject(err);
        this.fail(new GatesRunnerError(`gates process killed after request ${id} ${why}`, 'process_exited'));
      };
      const timer = setTimeout(
        () => giveUp(new GatesRunnerError(`gates request timed out after ${timeoutMs} ms`, 'timeout'), 'timed out'),
        timeoutMs,
      );
      const onAbort = () => giveUp(signal!.reason, 'was given up by its caller');
      signal?.addEventListener('abort', onAbort, { once: true });
      const unlisten = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, { accept: resolve, reject, timer, unlisten });
      this.child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  }

  async stop(): Promise<void> {
    this.rejectAll(new GatesRunnerError('the gates runner was closed', 'closed'));
    this.alive = false;
    this.child.stdin.end(); // the process exits at end of input
    const killer = setTimeout(() => this.child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await this.gone;
    clearTimeout(killer);
  }

  private receive(line: string): void {
    if (!this.alive) return;
    let message: z.infer<typeof responseSchema>;
    try {
      message = responseSchema.parse(JSON.parse(line));
    } catch (err) {
      this.fail(
        new GatesRunnerError(`gates process wrote an invalid response: ${line.slice(0, 200)}`, 'protocol', {
          cause: err,
        }),
      );
      return;
    }
    const request = message.id === null ? undefined : this.settle(message.id);
    if (!request) {
      this.fail(new GatesRunnerError(`gates response for no pending request: ${line.slice(0, 200)}`, 'protocol'));
    } else if ('error' in message) {
      request.reject(new GatesRunnerError(`gates process refused the request: ${message.error}`, 'request_failed'));
    } else {
      request.accept(message);
    }
  }

  /** Takes a request off the pending list, with its timer stopped. */
  private settle(id: string): PendingRequest | undefined {
    const request = this.pending.get(id);
    if (request) {
      clearTimeout(request.timer);
      request.unlisten();
      this.pending.delete(id);
    }
    return request;
  }

  /** The process can no longer be trusted with requests: fail those in hand and make sure it is gone. */
  private fail(err: GatesRunnerError): void {
    this.alive = false;
    this.rejectAll(err);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private rejectAll(err: GatesRunnerError): void {
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(err);
  }

  private tail(): string {
    const tail = this.stderrTail.trim();
    return tail ? `; stderr:\n${tail}` : '';
  }
}
