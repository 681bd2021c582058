/**
 * (g) CPU per turn against the bare floor: the CPU time every process of the service spends on a batch
 * of turns, against what the same processes spend on a batch of bare workflows with the turn's activity
 * shape, as a ratio. Time is what (a) and (f) compare; CPU is what limits throughput on a small machine
 * (`npm run load`), and unlike wall time it does not hide work behind Temporal's dispatch waits.
 *
 * - The service runs as `npm start` runs it, each role a child process: the API, a worker (its gates
 *   process and sandbox runs included), the scripted model; the bare workflow's worker is one more
 *   (dev/bench/bare-worker-process.ts). With Postgres and Temporal (children too) each role's processes
 *   go into a cpuacct cgroup of their own (proc-cpu.ts, as `npm run load` counts them).
 * - The floor: BareWorkflow (dev/bench/bare-workflow.ts) with one no-op activity per step of the turn
 *   (every activity its history scheduled and every local activity it recorded a marker for), in the same
 *   order and with the same overlaps (dev/bench/history-shape.ts), read off the first turn's history;
 *   every measured turn's history must have the same shape. That is "a bare workflow with the same number
 *   of no-op activities": what Temporal costs for a workflow of that many steps, so running a step as a
 *   local activity is one of the ways a turn can come closer to it. When the turn has local activities,
 *   a second floor mirrors them (no-op local activities where the turn had them) and is reported beside
 *   the first: against it, only the work inside the steps counts.
 * - Counted: the service's processes (API, worker with its gates process and sandbox runs, Temporal,
 *   Postgres). The scripted model stands in for Anthropic's API, whose CPU is not on the service's
 *   machines, so it is listed apart and not counted (the bare workflow calls no model).
 * - Batches of N turns (POST, one SSE subscriber to `turn.completed`, then the workflow's close) and of
 *   N bare workflows (start, `result()`), each with the same number in flight, alternate over several
 *   rounds after one warm-up batch of each; each batch is charged all CPU of all roles from its start
 *   until a short settle after its last workflow closed.
 * - Not counted: this process (the driver: HTTP and SSE client for turns, Temporal client for bare
 *   workflows), and children of it that are not a role (what the in-process sections left running).
 */
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { TurnResult } from '../../contracts/turn';
import { seedDemoHealthData } from '../synthetic-data/demo-user';
import { startApiProcess } from './api-process';
import { createBenchUser } from './fixtures';
import { activityShape, asActivities, shapeKey, type ActivityShape, type BareStep } from './history-shape';
import { startBareWorkerProcess, startModelProcess, startWorkerProcess, type RoleProcess } from './load-processes';
import { CPU_ROLES, cpuBetween, sampleCpu, type RoleCgroups } from './proc-cpu';
import { runBareWorkflow, runTurn } from './turn-overhead';

/** What this process's own CPU is reported as: the bench drives the turns, it is not one of the roles. */
const DRIVER = 'bench process (driver)';
/** Children of this process that are not a role: left over by other sections. */
const NOT_A_ROLE = CPU_ROLES.other;
/** The stand-in for Anthropic's API: listed, not counted. */
const MODEL = CPU_ROLES.model;
const NOT_COUNTED = new Set<string>([DRIVER, NOT_A_ROLE, MODEL]);
/** After a batch's last workflow closed: trailing work (the last workflow task's follow-ups, the SSE close). */
const SETTLE_MS = 250;
const PER_USER_CAP = 3;

export interface TurnCpuStack {
  apiUrl: string;
  taskQueue: string;
  bareTaskQueue: string;
  cgroups: RoleCgroups | null;
  stop(): Promise<void>;
}

/**
 * Starts the roles (model, worker, bare worker, API) as child processes and puts every child of this
 * process, Postgres and Temporal included, into its role's cgroup when `cgroups` is given.
 */
export async function startTurnCpuStack(opts: {
  databaseUrl: string;
  temporalAddress: string;
  turnBundleCode: string;
  bareBundleCode: string;
  cgroups: RoleCgroups | null;
}): Promise<TurnCpuStack> {
  const suffix = Date.now().toString(36);
  const taskQueue = `amy-bench-cpu-${suffix}`;
  const bareTaskQueue = `amy-bench-cpu-bare-${suffix}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-bench-cpu-'));
  const roles: RoleProcess[] = [];
  const stop = async () => {
    await Promise.all(roles.map((role) => role.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const turnBundle = path.join(dir, 'workflow-bundle.js');
    const bareBundle = path.join(dir, 'bare-workflow-bundle.js');
    fs.writeFileSync(turnBundle, opts.turnBundleCode);
    fs.writeFileSync(bareBundle, opts.bareBundleCode);
    const model = await startModelProcess(0, null);
    roles.push(model);
    const started = await Promise.all([
      startWorkerProcess({
        DATABASE_URL: opts.databaseUrl,
        TEMPORAL_ADDRESS: opts.temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ANTHROPIC_BASE_URL: model.url,
        WORKFLOW_BUNDLE_PATH: turnBundle,
      }),
      startBareWorkerProcess({
        TEMPORAL_ADDRESS: opts.temporalAddress,
        BARE_TASK_QUEUE: bareTaskQueue,
        BARE_WORKFLOW_BUNDLE_PATH: bareBundle,
      }),
      startApiProcess({
        DATABASE_URL: opts.databaseUrl,
        TEMPORAL_ADDRESS: opts.temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        // The bench starts turns back to back: the per-user creation rate is for clients.
        AMY_MAX_TURNS_PER_MINUTE: '100000',
      }),
    ]);
    roles.push(...started);
    opts.cgroups?.adoptChildren();
    return { apiUrl: started[2].url, taskQueue, bareTaskQueue, cgroups: opts.cgroups, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface TurnKindSpec {
  /** For the report: "knowledge turn", "data turn". */
  name: string;
  question: string;
  /** Throws when a turn did not take the kind's path; checked on every turn, warm-up included. */
  check(result: TurnResult): void;
  /** Whether the user needs the demo health data (seedDemoHealthData). */
  healthData: boolean;
  perBatch: number;
  rounds: number;
}

interface RoleCpu {
  role: string;
  /** CPU milliseconds per turn (or per bare workflow), over all measured batches. */
  msPerRun: number;
}

export interface CpuSeries {
  runs: number;
  /** All roles' CPU over the measured batches, per run. */
  msPerRun: number;
  byRole: RoleCpu[];
  /** Each measured batch's CPU per run, in order. */
  batchMsPerRun: number[];
  /** This process's CPU per run (not counted), other children's and the scripted model's (not counted). */
  driverMsPerRun: number;
  otherMsPerRun: number;
  modelMsPerRun: number;
  wallSeconds: number;
}

/** The roles a bare workflow does not run on: it writes no rows, and no client asks an API for it. */
const ROLES_THE_FLOOR_LACKS = [CPU_ROLES.postgres, CPU_ROLES.api];

export interface LowestReachableRatio {
  ratio: number;
  /** What the turn spent in ROLES_THE_FLOOR_LACKS, per turn. */
  roles: RoleCpu[];
}

/**
 * The least the ratio could read for this turn on this machine: the floor, plus what the turn spends in
 * the roles the floor does not run on at all, as if the turn's worker and Temporal cost no more than the
 * floor's. A target below it cannot be reached by making the worker cheaper, only by a turn that writes
 * less to Postgres and asks less of the API.
 */
export function lowestReachableRatio(
  turn: Pick<CpuSeries, 'byRole'>,
  bare: Pick<CpuSeries, 'msPerRun'>,
): LowestReachableRatio {
  const roles = ROLES_THE_FLOOR_LACKS.map((role) => turn.byRole.find((r) => r.role === role) ?? { role, msPerRun: 0 });
  const ownMs = roles.reduce((sum, r) => sum + r.msPerRun, 0);
  return { ratio: (bare.msPerRun + ownMs) / bare.msPerRun, roles };
}

export interface TurnCpuResult {
  kind: TurnKindSpec;
  concurrency: number;
  turn: CpuSeries;
  /** The floor: one no-op activity per step of the turn, local activities included. */
  bare: CpuSeries;
  /** turn.msPerRun / bare.msPerRun. */
  ratio: number;
  /** The same, round by round: how steady it is. */
  roundRatios: number[];
  /** When the turn ran local activities: the floor with no-op local activities in their places. */
  mirror: { bare: CpuSeries; ratio: number; roundRatios: number[] } | null;
  /** The least the ratio could read here (lowestReachableRatio). */
  lowestReachable: LowestReachableRatio;
  shape: ActivityShape;
  /** The bare workflow's own history, counted the same way: it must match the turn's numbers. */
  bareShape: ActivityShape;
  accounting: 'cgroup' | 'proc';
}

/** Runs `run(i)` for i < n with at most `concurrency` at a time; each slot starts its next at once. */
async function inSlots<T>(n: number, concurrency: number, run: (i: number, slot: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async (_, slot) => {
      while (next < n) {
        const i = next++;
        results[i] = await run(i, slot);
      }
    }),
  );
  return results;
}

interface BatchCpu {
  byRole: Map<string, number>;
  wallSeconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function batchCpu(stack: TurnCpuStack, work: () => Promise<unknown>): Promise<BatchCpu> {
  const start = sampleCpu(stack.cgroups, DRIVER);
  await work();
  await sleep(SETTLE_MS);
  const usage = cpuBetween(start, sampleCpu(stack.cgroups, DRIVER), os.availableParallelism());
  return { byRole: new Map(usage.coresByRole.map((r) => [r.role, r.seconds])), wallSeconds: usage.wallSeconds };
}

function series(batches: BatchCpu[], runsPerBatch: number): CpuSeries {
  const runs = batches.length * runsPerBatch;
  const total = new Map<string, number>();
  for (const batch of batches) for (const [role, s] of batch.byRole) total.set(role, (total.get(role) ?? 0) + s);
  const counted = (byRole: Map<string, number>) =>
    [...byRole].filter(([role]) => !NOT_COUNTED.has(role)).reduce((sum, [, s]) => sum + s, 0);
  const perRun = (seconds: number) => (seconds * 1000) / runs;
  return {
    runs,
    msPerRun: perRun(counted(total)),
    byRole: [...total]
      .filter(([role]) => !NOT_COUNTED.has(role))
      .map(([role, s]) => ({ role, msPerRun: perRun(s) }))
      .sort((a, b) => b.msPerRun - a.msPerRun),
    batchMsPerRun: batches.map((b) => (counted(b.byRole) * 1000) / runsPerBatch),
    driverMsPerRun: perRun(total.get(DRIVER) ?? 0),
    otherMsPerRun: perRun(total.get(NOT_A_ROLE) ?? 0),
    modelMsPerRun: perRun(total.get(MODEL) ?? 0),
    wallSeconds: batches.reduce((sum, b) => sum + b.wallSeconds, 0),
  };
}

async function shapeOf(temporal: Client, workflowId: string): Promise<ActivityShape> {
  return activityShape((await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? []);
}

export async function measureTurnCpu(opts: {
  stack: TurnCpuStack;
  pool: Pool;
  temporal: Client;
  agent: http.Agent;
  kind: TurnKindSpec;
  concurrency: number;
}): Promise<TurnCpuResult> {
  const { stack, kind, concurrency, temporal } = opts;
  // Enough users that no slot waits for the per-user cap on turns in flight.
  const users: string[] = [];
  for (let i = 0; i < Math.ceil(concurrency / PER_USER_CAP); i++) {
    const { userId, apiKey } = await createBenchUser(opts.pool, `cpu_${kind.name.replace(/\W+/g, '_')}_${i}`);
    if (kind.healthData) await seedDemoHealthData(opts.pool, userId);
    users.push(apiKey);
  }
  const turnBatch = () =>
    inSlots(kind.perBatch, concurrency, async (_, slot) => {
      const turn = await runTurn({
        apiUrl: stack.apiUrl,
        apiKey: users[Math.floor(slot / PER_USER_CAP)],
        agent: opts.agent,
        temporal,
        question: kind.question,
        checkResult: kind.check,
      });
      return turn.workflowId;
    });
  const bareBatch = (steps: BareStep[]) =>
    inSlots(kind.perBatch, concurrency, async () => {
      const bare = await runBareWorkflow({ temporal, bareTaskQueue: stack.bareTaskQueue }, steps);
      return bare.workflowId;
    });

  // Warm-up, not counted: the first turns pay lazy set-up (connections, the gates process, the sandbox
  // probe), and the first turn's history gives the floor its shape.
  const warmTurns = await turnBatch();
  const shape = await shapeOf(temporal, warmTurns[0]);
  // The floor runs every step as a full activity; the mirror keeps the turn's local activities local.
  const floorSteps = asActivities(shape.steps);
  const mirrorSteps = shape.localActivities > 0 ? shape.steps : null;
  const counts = (s: ActivityShape) =>
    `${s.activities} activities, ${s.localActivities} local activities, at most ${s.maxConcurrentActivities} at once`;
  const expectFloor = (got: ActivityShape, want: ActivityShape) => {
    if (counts(got) !== counts(want))
      throw new Error(`the bare workflow recorded ${counts(got)}; expected ${counts(want)}`);
  };
  const warmBare = await bareBatch(floorSteps);
  const bareShape = await shapeOf(temporal, warmBare[0]);
  expectFloor(bareShape, {
    ...shape,
    activities: shape.activities + shape.localActivities,
    localActivities: 0,
    maxConcurrentActivities: bareShape.maxConcurrentActivities,
  });
  if (mirrorSteps) expectFloor(await shapeOf(temporal, (await bareBatch(mirrorSteps))[0]), shape);

  const turnBatches: BatchCpu[] = [];
  const bareBatches: BatchCpu[] = [];
  const mirrorBatches: BatchCpu[] = [];
  const turnIds: string[] = [];
  // Alternating, and which goes first rotating too, so a drift in the machine's load over the run falls
  // on every series alike.
  for (let round = 0; round < kind.rounds; round++) {
    const batches: Array<() => Promise<unknown>> = [
      async () =>
        turnBatches.push(
          await batchCpu(stack, async () => {
            turnIds.push(...(await turnBatch()));
          }),
        ),
      async () => bareBatches.push(await batchCpu(stack, () => bareBatch(floorSteps))),
    ];
    if (mirrorSteps) batches.push(async () => mirrorBatches.push(await batchCpu(stack, () => bareBatch(mirrorSteps))));
    for (let i = 0; i < batches.length; i++) await batches[(round + i) % batches.length]();
  }

  // Outside the measured batches: every measured turn ran the shape the floor copies.
  const expected = shapeKey(shape.steps);
  for (const id of turnIds) {
    const got = shapeKey((await shapeOf(temporal, id)).steps);
    if (got !== expected) throw new Error(`turn ${id} ran ${got}, the first turn ${expected}`);
  }

  const turn = series(turnBatches, kind.perBatch);
  const against = (batches: BatchCpu[]) => {
    const bare = series(batches, kind.perBatch);
    return {
      bare,
      ratio: turn.msPerRun / bare.msPerRun,
      roundRatios: turn.batchMsPerRun.map((ms, i) => ms / bare.batchMsPerRun[i]),
    };
  };
  const floor = against(bareBatches);
  return {
    kind,
    concurrency,
    turn,
    ...floor,
    mirror: mirrorSteps ? against(mirrorBatches) : null,
    lowestReachable: lowestReachableRatio(turn, floor.bare),
    shape,
    bareShape,
    accounting: stack.cgroups ? 'cgroup' : 'proc',
  };
}
