/**
 * `npm run load`: many concurrent turns, each with several SSE subscribers, driven through the HTTP API
 * against the whole service. Each run's record goes to docs/benchmarks/load/<time>.md and its table to
 * docs/benchmarks.md's generated block under "## Load (npm run load)" (./load-write.ts).
 * A load script, not a test: a missed target is reported, never turned into an exit code.
 *
 * What runs: a throwaway Postgres (fsync off, commit timestamps on) and a headless Temporal dev server (or
 * DATABASE_URL / TEMPORAL_ADDRESS), the scripted model in a process of its own (dev/bench/model-process.ts),
 * the API as `npm run api` runs it, and 1 or more workers as `npm run worker` runs them (with a workflow
 * bundle built once). This process is only the load generator and the accounting.
 *
 * Targets, by the kind of a phase's turns (./load-numbers.ts), on this 2-core machine: fallback turns (and a
 * mix) ≥ 5 turns/s sustained with p99 overhead (turn wall − the scripted model's own time) ≤ 1 s; knowledge
 * turns ≥ 10/s with p99 overhead ≤ 0.5 s; data turns, which run a Python sandbox each, ≥ 3/s with p99
 * overhead ≤ 1 s. An in-flight phase (`--in-flight 1000 --pace realistic`) has targets of
 * its own: every turn completes with every event exactly once, event delivery p99 ≤ 100 ms and
 * POST → 201 p99 ≤ 100 ms; it reports the worker's memory per turn in flight.
 *
 *   npm run load -- [options]
 *     --turns N            measured turns per phase                                     (default 200)
 *     --subscribers M      SSE subscribers per turn, connected right after the 201      (default 3)
 *     --concurrency C      most turns in flight; users = ⌈C / 3⌉ (the per-user cap)     (default 8)
 *     --rate R             open loop: turn i is due at i / R s and timed from then;
 *                          C still caps turns in flight. Default: closed loop, C slots
 *     --kind K[,K…]        fallback | knowledge | data | mix, one phase each, in order  (default fallback)
 *                          mix: fallback and knowledge alternating, every 10th a data turn
 *     --warmup W           turns per phase run first and not counted                    (default max(5, C))
 *     --in-flight N        one wave of N turns per phase, all in flight at once: started over
 *                          --ramp-s, each lasting what the (paced) model takes; sets --turns N,
 *                          --concurrency N, --rate N / ramp, --warmup 10 and --kind knowledge
 *                          unless given. Use with --pace realistic (about a minute per turn)
 *     --ramp-s S           the in-flight wave's ramp-up                                 (default 30)
 *     --workers K          worker processes                                              (default 1)
 *     --apis M             API processes; turns and their streams spread over them      (default 1)
 *     --pace P             none | realistic: the scripted model as slow as Claude, i.e.
 *                          time to first token, tokens/s, each call's output length
 *                          (dev/scripted-model/pacing.ts)                                (default none)
 *     --ttft-ms T          with --pace realistic: time to first token for every model   (default by model)
 *     --tokens-per-s R     with --pace realistic: output speed for every model          (default by model)
 *     --tokens-per-delta K with --pace realistic: output tokens per streamed delta      (default 4)
 *     --output-scale F     with --pace realistic: a factor on every call's output length (default 1)
 *     --chunk-delay-ms D   the scripted model's pause before each streamed delta        (default 0)
 *     --turn-timeout-s T   a turn without a terminal event after T s is lost    (default 120; paced 600)
 *     --note TEXT          a note for the report, e.g. what else ran on the machine
 *     --no-write           print the report only; write no record and leave docs/benchmarks.md alone
 *     --help
 *
 * How each number is measured is written out in docs/benchmarks.md's "Load (npm run load)" section.
 * To profile the workers under load: LOAD_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" (node
 * flags for the worker processes only; a profile per thread is written when they stop); the API processes
 * likewise with LOAD_API_NODE_ARGS (dev/bench/api-process.ts; also `npm run bench`'s API process).
 */
import { useEphemeralMasterKey } from '../stack/dev-keys';
import { createDataKeyStore } from '../../platform/crypto/data-keys';
import { loadMasterKeyring } from '../../platform/crypto/master-key';
import { createDataConverter } from '../../platform/temporal/data-converter';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { seedDemoHealthData } from '../synthetic-data/demo-user';
import { createUserWithApiKey } from '../../platform/users';
import { quietBundlerLogger, turnWorkflowBundleOptions } from '../../worker/create-worker';
import { startApiProcess, stopApiProcesses, type ApiProcess } from './api-process';
import { newAgent } from './http-client';
import { runPhase, type DriverOptions, type LoadUser, type PhaseResult, type TurnKind } from './load-driver';
import { codeVersion, commandLine, usageFromHeader, optionsOrUsage } from './command-line';
import { startInfrastructure } from './infrastructure';
import {
  startModelProcess,
  startWorkerProcess,
  stopRoleProcesses,
  type ModelCallTiming,
  type RoleProcess,
} from './load-processes';
import { computePhase, inFlightMemory, type MemorySample, type PhaseNumbers } from './load-numbers';
import { renderDocSection, renderRunRecord, type RunInfo } from './load-render';
import { listRunRecords, writeDocSection, writeRunRecord } from './load-write';
import type { PacingOverrides } from '../scripted-model/pacing';
import { cpuBetween, RoleCgroups, sampleCpu } from './proc-cpu';
import { machineInfo } from './report';
import { nowMs } from './stats';
import { historyBreakdown, type HistoryBreakdown } from './turn-overhead';

const PER_USER_CAP = 3;
const IDLE_SECONDS = 5;
/** Histories fetched per phase for the Temporal breakdown; each is a round trip, so a sample will do. */
const HISTORY_SAMPLE = 40;
const MIX: TurnKind[] = [
  'fallback',
  'knowledge',
  'fallback',
  'knowledge',
  'fallback',
  'knowledge',
  'fallback',
  'knowledge',
  'fallback',
  'data',
];

const USAGE = usageFromHeader(__filename, 'load');

const say = (msg: string) => console.log(`[load] ${msg}`);

interface Options {
  turns: number;
  subscribers: number;
  concurrency: number;
  rate: number | undefined;
  phases: Array<{ name: string; kinds: TurnKind[] }>;
  warmup: number;
  /** The in-flight wave's size, when the phases are waves (`--in-flight`). */
  inFlight: number | null;
  workers: number;
  apis: number;
  /** Realistic pacing with these overrides, or null: the model answers at once. */
  pacing: PacingOverrides | null;
  chunkDelayMs: number;
  turnTimeoutMs: number;
  note: string | null;
  write: boolean;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      turns: { type: 'string' },
      subscribers: { type: 'string' },
      concurrency: { type: 'string' },
      rate: { type: 'string' },
      kind: { type: 'string' },
      warmup: { type: 'string' },
      'in-flight': { type: 'string' },
      'ramp-s': { type: 'string' },
      workers: { type: 'string' },
      apis: { type: 'string' },
      pace: { type: 'string' },
      'ttft-ms': { type: 'string' },
      'tokens-per-s': { type: 'string' },
      'tokens-per-delta': { type: 'string' },
      'output-scale': { type: 'string' },
      'chunk-delay-ms': { type: 'string' },
      'turn-timeout-s': { type: 'string' },
      note: { type: 'string' },
      'no-write': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return null;
  const num = (name: string, raw: string | undefined, fallback: number, min: number) => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, not ${raw}`);
    return n;
  };
  const inFlight = values['in-flight'] === undefined ? null : Math.floor(num('in-flight', values['in-flight'], 0, 1));
  const rampS = num('ramp-s', values['ramp-s'], 30, 0.01);
  const concurrency = Math.floor(num('concurrency', values.concurrency, inFlight ?? 8, 1));
  const phases = (values.kind ?? (inFlight ? 'knowledge' : 'fallback')).split(',').map((name) => {
    if (name === 'mix') return { name, kinds: [...new Set(MIX)] };
    if (name === 'fallback' || name === 'knowledge' || name === 'data') return { name, kinds: [name as TurnKind] };
    throw new Error(`--kind must be fallback, knowledge, data or mix, not ${name}`);
  });
  const pace = values.pace ?? 'none';
  if (pace !== 'none' && pace !== 'realistic') throw new Error(`--pace must be none or realistic, not ${pace}`);
  const optional = (name: string, raw: string | undefined, min: number) =>
    raw === undefined ? undefined : num(name, raw, 0, min);
  const pacing: PacingOverrides | null =
    pace === 'realistic'
      ? {
          firstTokenMs: optional('ttft-ms', values['ttft-ms'], 0),
          tokensPerSecond: optional('tokens-per-s', values['tokens-per-s'], 0.01),
          tokensPerDelta: optional('tokens-per-delta', values['tokens-per-delta'], 0.01),
          outputScale: optional('output-scale', values['output-scale'], 0.01),
        }
      : null;
  const rate =
    values.rate === undefined ? (inFlight ? inFlight / rampS : undefined) : num('rate', values.rate, 0, 0.01);
  return {
    turns: Math.floor(num('turns', values.turns, inFlight ?? 200, 1)),
    subscribers: Math.floor(num('subscribers', values.subscribers, 3, 1)),
    concurrency,
    rate,
    phases,
    warmup: Math.floor(num('warmup', values.warmup, inFlight ? 10 : Math.max(5, concurrency), 0)),
    inFlight,
    workers: Math.floor(num('workers', values.workers, 1, 1)),
    apis: Math.floor(num('apis', values.apis, 1, 1)),
    pacing,
    chunkDelayMs: num('chunk-delay-ms', values['chunk-delay-ms'], 0, 0),
    turnTimeoutMs: num('turn-timeout-s', values['turn-timeout-s'], pacing ? 600 : 120, 1) * 1000,
    note: values.note ?? null,
    write: !values['no-write'],
  };
}

const kindOf =
  (phaseName: string) =>
  (index: number): TurnKind =>
    phaseName === 'mix' ? MIX[index % MIX.length] : (phaseName as TurnKind);

/** Picks `n` records spread evenly over the phase, so the sample covers its start, middle and end. */
function spread<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]);
}

async function run(opts: Options): Promise<number> {
  useEphemeralMasterKey();
  const startedAt = nowMs();
  const loadBefore = os.loadavg();
  const stoppers: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  let interrupted = false;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stoppers.reverse()) await stop().catch((err) => console.error('[load] stop failed:', err));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      interrupted = true;
      void stopAll().then(() => process.exit(130));
    });
  }

  try {
    say('starting Postgres (with commit timestamps) and Temporal');
    const infra = await startInfrastructure({ commitTimestamps: true });
    stoppers.push(() => infra.stop());

    say('bundling the turn workflow once for every worker');
    // With the interceptors every worker of the service runs (its tracing's), as worker/bundle-workflows.ts builds it.
    const bundle: WorkflowBundle = await bundleWorkflowCode({
      ...turnWorkflowBundleOptions,
      logger: quietBundlerLogger,
    });
    const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-load-bundle-'));
    stoppers.push(async () => fs.rmSync(bundleDir, { recursive: true, force: true }));
    const bundlePath = path.join(bundleDir, 'workflow-bundle.js');
    fs.writeFileSync(bundlePath, bundle.code);

    const model = await startModelProcess(opts.chunkDelayMs, opts.pacing);
    stoppers.push(() => model.stop());
    // A task queue of our own, in case TEMPORAL_ADDRESS is a shared server; the API child inherits it.
    const taskQueue = `amy-load-${Date.now().toString(36)}`;
    process.env.TEMPORAL_TASK_QUEUE = taskQueue;
    say(`starting ${opts.workers} worker process(es) and ${opts.apis} API process(es)`);
    const workers: RoleProcess[] = await Promise.all(
      Array.from({ length: opts.workers }, () =>
        startWorkerProcess({
          DATABASE_URL: infra.databaseUrl,
          TEMPORAL_ADDRESS: infra.temporalAddress,
          TEMPORAL_TASK_QUEUE: taskQueue,
          ANTHROPIC_BASE_URL: model.url,
          WORKFLOW_BUNDLE_PATH: bundlePath,
        }),
      ),
    );
    stoppers.push(stopRoleProcesses);
    // Every user's turns are watched by `--subscribers` streams on the user's one key, reconnects included;
    // the per-key stream cap (20 by default) is for clients, not for this load, so the API child gets room.
    process.env.AMY_MAX_STREAMS_PER_KEY = String(Math.max(1000, 4 * PER_USER_CAP * opts.subscribers));
    // Likewise the per-user creation rate: the load measures the service, and its few users start turns
    // back to back, faster than a person would.
    process.env.AMY_MAX_TURNS_PER_MINUTE = '100000';
    const apis: ApiProcess[] = [];
    stoppers.push(stopApiProcesses);
    for (let i = 0; i < opts.apis; i++) {
      apis.push(await startApiProcess({ DATABASE_URL: infra.databaseUrl, TEMPORAL_ADDRESS: infra.temporalAddress }));
    }

    const pool = new Pool({ connectionString: infra.databaseUrl, max: 2 });
    stoppers.push(() => pool.end());
    const temporalConnection = await Connection.connect({ address: infra.temporalAddress });
    stoppers.push(() => temporalConnection.close());
    const temporal = new Client({
      connection: temporalConnection,
      dataConverter: createDataConverter(pool, createDataKeyStore(pool, loadMasterKeyring())),
    });
    const agent = newAgent();
    stoppers.push(async () => agent.destroy());

    const userCount = Math.ceil(opts.concurrency / PER_USER_CAP);
    say(`creating ${userCount} users with the demo health data`);
    const suffix = Date.now().toString(36);
    const users: LoadUser[] = [];
    for (let i = 0; i < userCount; i++) {
      const { user, apiKey } = await createUserWithApiKey(pool, `load_${suffix}_${i}`);
      // Data turns read these rows, the Domain Expert the profile and labs; every user gets the same.
      await seedDemoHealthData(pool, user.id);
      users.push({ apiKey, inFlight: 0 });
    }
    const driver: DriverOptions = {
      apiUrls: apis.map((api) => api.url),
      agent,
      users,
      subscribers: opts.subscribers,
      perUserCap: PER_USER_CAP,
      turnTimeoutMs: opts.turnTimeoutMs,
    };

    // Date.now() − nowMs(), sampled through the run: client arrivals are on nowMs(), commits on the system
    // clock. The mean of many 1-ms-resolution samples places the two within a fraction of a millisecond.
    const offsets: number[] = [];
    const sampleOffset = () => offsets.push(Date.now() - nowMs());
    const offsetTimer = setInterval(sampleOffset, 100);
    stoppers.push(async () => clearInterval(offsetTimer));

    // Each role's processes into a CPU-accounting cgroup of its own, where the sandbox runs are counted too.
    const cgroups = RoleCgroups.create();
    if (cgroups) {
      cgroups.adoptChildren();
      stoppers.push(async () => cgroups.remove());
    } else {
      say('no writable cpuacct cgroup: CPU by role from /proc, without the sandbox runs');
    }

    // What the stack costs with no turns at all (pollers, timers), to tell fixed costs from per-turn ones.
    const idleStart = sampleCpu(cgroups);
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const idle = cpuBetween(idleStart, sampleCpu(cgroups), os.availableParallelism());

    const phases: PhaseNumbers[] = [];
    for (const phase of opts.phases) {
      if (interrupted) break;
      const common = { concurrency: opts.concurrency, rate: opts.rate, kindOf: kindOf(phase.name) };
      if (opts.warmup > 0) {
        say(`${phase.name}: ${opts.warmup} warm-up turns`);
        await runPhase(driver, {
          ...common,
          concurrency: Math.min(opts.concurrency, opts.warmup),
          turns: opts.warmup,
          rate: undefined,
        });
      }
      say(
        `${phase.name}: ${opts.turns} turns × ${opts.subscribers} subscribers, ` +
          (opts.rate === undefined ? `${opts.concurrency} in flight` : `${opts.rate}/s, at most ${opts.concurrency}`),
      );
      const loop = monitorEventLoopDelay({ resolution: 10 });
      const cpuStart = sampleCpu(cgroups);
      // Resident memory against turns in flight, every second: the memory a turn in flight costs.
      const inFlight = { turns: 0 };
      const rssKb = (roles: RoleProcess[] | ApiProcess[]) =>
        roles.reduce((kb: number, role: RoleProcess | ApiProcess) => kb + role.memoryKb('VmRSS'), 0);
      const memory: MemorySample[] = [];
      const sampleMemory = () =>
        memory.push({ inFlight: inFlight.turns, workersKb: rssKb(workers), apisKb: rssKb(apis) });
      sampleMemory();
      const memoryTimer = setInterval(sampleMemory, 1000);
      loop.enable();
      const result: PhaseResult = await runPhase(driver, {
        ...common,
        turns: opts.turns,
        inFlight,
        onProgress: (done) => {
          if (done % 50 === 0) say(`${phase.name}: ${done}/${opts.turns} (${inFlight.turns} in flight)`);
        },
      });
      clearInterval(memoryTimer);
      loop.disable();
      const cpu = cpuBetween(cpuStart, sampleCpu(cgroups), os.availableParallelism());
      say(`${phase.name}: collecting commit times, model timings and histories`);
      phases.push(
        computePhase({
          name: phase.name,
          kinds: phase.kinds,
          concurrency: opts.concurrency,
          rate: opts.rate,
          result,
          clockOffsetMs: offsets.reduce((a, b) => a + b, 0) / offsets.length,
          ...(await collectServerSide(pool, temporal, result, infra.commitTimestamps, await model.timings())),
          cpu,
          loopDelay: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
          inFlightTarget: opts.inFlight,
          memory: inFlightMemory(memory),
        }),
      );
      const n = phases[phases.length - 1];
      say(
        `${phase.name}: ${n.completed}/${n.failed}/${n.lost} completed/failed/lost, ` +
          `${n.steadyTurnsPerSecond.toFixed(2)} turns/s, overhead p50 ${n.overhead.p50.toFixed(0)} ms ` +
          `p99 ${n.overhead.p99.toFixed(0)} ms, delivery p99 ${n.delivery?.p99.toFixed(1) ?? '—'} ms, ` +
          `POST p99 ${n.post.p99.toFixed(1)} ms, peak ${n.memory.peakInFlight} in flight, ` +
          `${n.eventsMissing} events missing and ${n.eventsDuplicated} duplicated`,
      );
    }
    clearInterval(offsetTimer);
    if (interrupted || phases.length === 0) return 130;

    const machine = machineInfo(infra.postgresVersion, '');
    const temporalVersion = (await temporal.workflowService.getSystemInfo({})).serverVersion || 'unknown';
    const half = Math.max(1, Math.floor(offsets.length / 10));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const mb = (kb: number) => (kb * 1024) / 1e6;
    const info: RunInfo = {
      date: machine.date,
      cpu: machine.cpu,
      cores: machine.cores,
      node: machine.node,
      postgres: infra.postgresVersion + (process.env.DATABASE_URL ? ' (DATABASE_URL)' : ''),
      temporal:
        `server ${temporalVersion}` +
        (process.env.TEMPORAL_ADDRESS ? ' (TEMPORAL_ADDRESS)' : ', dev server, in memory'),
      workers: opts.workers,
      apis: opts.apis,
      subscribers: opts.subscribers,
      chunkDelayMs: opts.chunkDelayMs,
      pacing: opts.pacing,
      warmup: opts.warmup,
      loadBefore,
      loadAfter: os.loadavg(),
      commitTimestamps: infra.commitTimestamps,
      clockDriftMs: mean(offsets.slice(-half)) - mean(offsets.slice(0, half)),
      memory: [
        ...apis.map((api, i) => ({
          role: opts.apis === 1 ? 'API' : `API ${i + 1}`,
          peakMb: mb(api.memoryKb('VmHWM')),
          endMb: mb(api.memoryKb('VmRSS')),
        })),
        ...workers.map((w, i) => ({
          role: opts.workers === 1 ? 'worker' : `worker ${i + 1}`,
          peakMb: mb(w.memoryKb('VmHWM')),
          endMb: mb(w.memoryKb('VmRSS')),
        })),
      ],
      durationSeconds: (nowMs() - startedAt) / 1000,
      idle,
      cpuAccounting: cgroups ? 'cgroup' : 'proc',
      code: codeVersion(),
      note: opts.note,
      command: commandLine('load', process.argv.slice(2)),
    };
    const record = renderRunRecord(info, phases);
    console.log(`\n${record}`);
    if (opts.write) {
      say(`record written to ${writeRunRecord(info.date, record)}`);
      say(`latest run written to ${writeDocSection(renderDocSection(info, phases, listRunRecords()))}`);
    }
    return 0;
  } finally {
    say('stopping');
    await stopAll();
  }
}

/** What the server side recorded about a phase's turns: commits, model calls, turn rows and histories. */
async function collectServerSide(
  pool: Pool,
  temporal: Client,
  result: PhaseResult,
  commitTimestamps: boolean,
  timings: ModelCallTiming[],
) {
  const turnIds = result.records.flatMap((r) => (r.turnId ? [r.turnId] : []));
  // Commit time in epoch ms. Without commit timestamps: the append transaction's start (created_at).
  const committedAt = commitTimestamps
    ? 'extract(epoch from pg_xact_commit_timestamp(xmin)) * 1000'
    : 'extract(epoch from created_at) * 1000';
  const events = await pool.query<{ turn_id: string; id: number; committed_ms: number }>(
    `SELECT turn_id, id, (${committedAt})::float8 AS committed_ms FROM turn_events WHERE turn_id = ANY($1)`,
    [turnIds],
  );
  const commits = new Map<string, Map<number, number>>();
  for (const e of events.rows) {
    if (!commits.has(e.turn_id)) commits.set(e.turn_id, new Map());
    commits.get(e.turn_id)!.set(e.id, e.committed_ms);
  }

  const byRequest = new Map(timings.map((t) => [t.requestId, t]));
  const calls = await pool.query<{ turn_id: string; request_id: string | null }>(
    'SELECT turn_id, request_id FROM llm_calls WHERE turn_id = ANY($1)',
    [turnIds],
  );
  const modelCalls = new Map<string, Array<{ startMs: number; durationMs: number }>>();
  let untimedModelCalls = 0;
  for (const call of calls.rows) {
    const timing = call.request_id ? byRequest.get(call.request_id) : undefined;
    if (!timing) {
      untimedModelCalls++;
      continue;
    }
    if (!modelCalls.has(call.turn_id)) modelCalls.set(call.turn_id, []);
    modelCalls.get(call.turn_id)!.push(timing);
  }

  const turnRows = await pool.query<{ id: string; queued_ms: number | null; duration_ms: number | null }>(
    `SELECT id, (extract(epoch from started_at - created_at) * 1000)::float8 AS queued_ms,
            (result->>'duration_ms')::float8 AS duration_ms
       FROM turns WHERE id = ANY($1)`,
    [turnIds],
  );
  const rows = new Map(turnRows.rows.map((r) => [r.id, { queuedMs: r.queued_ms, durationMs: r.duration_ms }]));

  const histories: HistoryBreakdown[] = [];
  const completed = result.records.filter((r) => r.turnId && r.outcome === 'completed');
  for (const r of spread(completed, HISTORY_SAMPLE)) histories.push(await historyBreakdown(temporal, r.turnId!));
  return { commits, modelCalls, untimedModelCalls, rows, histories };
}

async function main(): Promise<void> {
  const opts = optionsOrUsage(parseOptions, USAGE);
  if (!opts) return;
  // Exit explicitly: a stray handle (a pool's idle timer, an unref'd socket) must not keep the run alive.
  process.exit(await run(opts));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
