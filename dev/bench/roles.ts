/**
 * `npm run bench:roles`: each role's resident memory run through tsx and compiled (`npm run build`),
 * side by side in one run. The run's record goes to docs/benchmarks/roles/<time>.md and its table to
 * docs/benchmarks.md's generated block (./run-records.ts). Not a test.
 *
 * Three ways of running the API and the worker, each as a pair of child processes on its own task queue:
 *   - tsx, as `npm run api` / `npm run worker` (the worker bundles workflows/ at start);
 *   - tsx with the prebuilt workflow bundle (WORKFLOW_BUNDLE_PATH), which isolates what tsx costs;
 *   - compiled, as `npm run api:prod` / `npm run worker:prod` (plain node, the prebuilt bundle).
 * For each: VmRSS of both once ready and idle for a few seconds; then after a handful of turns through
 * the API (fallback turns and data questions, whose sandbox runs and gates are in the worker's child
 * processes, not counted), VmRSS again and the peak (VmHWM). Rounds take turns through the three, in a
 * rotating order, and the medians are reported.
 */
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'pg';
import { launch, lineIncludes, stopEach, type LaunchedProcess } from '../stack/child-process';
import { useEphemeralMasterKey } from '../stack/dev-keys';
import { startScriptedModelServer } from '../scripted-model/server';
import { seedDemoHealthData } from '../synthetic-data/demo-user';
import { readProcStatusKb } from './api-process';
import { DATA_QUESTION } from './data-turn-overhead';
import { createBenchUser } from './fixtures';
import { startInfrastructure } from './infrastructure';
import { machineInfo, machineRows, table, type MachineInfo } from './report';
import { listRunRecords, recordLink, writeGeneratedSection, writeRunRecord } from './run-records';
import { nowMs } from './stats';

const ROUNDS = 3;
/** Long enough for start-up's garbage to be collected, as an idle process would. */
const IDLE_MS = 5_000;
const FALLBACK_TURNS = 4;
const DATA_TURNS = 2;
const BUNDLE_PATH = 'dist/workflow-bundle.js';

interface Way {
  name: string;
  how: string;
  api: { entry: string } | { script: string };
  worker: { entry: string } | { script: string };
  prebuiltBundle: boolean;
}

const WAYS: Way[] = [
  {
    name: 'tsx',
    how: '`npm run api` / `npm run worker`: `node --import tsx`, the worker bundling workflows/ at start',
    api: { entry: 'api/main.ts' },
    worker: { entry: 'worker/main.ts' },
    prebuiltBundle: false,
  },
  {
    name: 'tsx, prebuilt bundle',
    how: 'the same with `WORKFLOW_BUNDLE_PATH` set to the build’s bundle: what tsx alone costs',
    api: { entry: 'api/main.ts' },
    worker: { entry: 'worker/main.ts' },
    prebuiltBundle: true,
  },
  {
    name: 'compiled',
    how: '`npm run api:prod` / `npm run worker:prod`: `node dist/<role>/main.js`, the prebuilt bundle',
    api: { script: 'dist/api/main.js' },
    worker: { script: 'dist/worker/main.js' },
    prebuiltBundle: true,
  },
];

interface Sample {
  apiIdleKb: number;
  apiAfterKb: number;
  apiPeakKb: number;
  workerIdleKb: number;
  workerAfterKb: number;
  workerPeakKb: number;
  workerReadyMs: number;
}

const say = (msg: string) => console.log(`[bench:roles] ${msg}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mb = (kb: number) => (kb * 1024) / 1e6;

async function askBlocking(url: string, apiKey: string, content: string): Promise<void> {
  const res = await fetch(`${url}/v1/turns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content }], stream: false }),
  });
  const body = (await res.json()) as { status?: string; error?: unknown };
  if (res.status !== 200 || body.status !== 'completed')
    throw new Error(`a turn did not complete (${res.status}): ${JSON.stringify(body.error ?? body)}`);
}

async function measure(
  way: Way,
  env: Record<string, string>,
  pool: Pool,
  running: Set<LaunchedProcess>,
): Promise<Sample> {
  const taskQueue = `amy-bench-roles-${Date.now().toString(36)}`;
  const roleEnv = { ...env, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'info' };
  const workerStarted = nowMs();
  const worker = await launch({
    name: `the worker (${way.name})`,
    ...way.worker,
    env: { ...roleEnv, WORKFLOW_BUNDLE_PATH: way.prebuiltBundle ? BUNDLE_PATH : undefined },
    ready: lineIncludes('worker polling'),
    track: running,
  });
  const workerReadyMs = nowMs() - workerStarted;
  const api = await launch({
    name: `the API (${way.name})`,
    ...way.api,
    env: { ...roleEnv, HOST: '127.0.0.1', PORT: '0' },
    ready: {
      line: (line: string) => (line.includes('api listening') ? (JSON.parse(line) as { url: string }).url : undefined),
    },
    track: running,
  });
  try {
    await sleep(IDLE_MS);
    const apiIdleKb = readProcStatusKb(api.pid, 'VmRSS');
    const workerIdleKb = readProcStatusKb(worker.pid, 'VmRSS');
    const user = await createBenchUser(pool, way.name.replace(/\W+/g, '_'));
    await seedDemoHealthData(pool, user.userId);
    for (let i = 0; i < FALLBACK_TURNS; i++) await askBlocking(api.ready, user.apiKey, 'thanks!');
    for (let i = 0; i < DATA_TURNS; i++) await askBlocking(api.ready, user.apiKey, DATA_QUESTION);
    await sleep(2_000);
    return {
      apiIdleKb,
      apiAfterKb: readProcStatusKb(api.pid, 'VmRSS'),
      apiPeakKb: readProcStatusKb(api.pid, 'VmHWM'),
      workerIdleKb,
      workerAfterKb: readProcStatusKb(worker.pid, 'VmRSS'),
      workerPeakKb: readProcStatusKb(worker.pid, 'VmHWM'),
      workerReadyMs,
    };
  } finally {
    await Promise.all([api.stop(), worker.stop()]);
  }
}

/** Each role's memory, each way it runs: medians with the range over rounds. */
function rolesTable(samples: Map<Way, Sample[]>): string {
  const med = (way: Way, key: keyof Sample) => median(samples.get(way)!.map((s) => s[key]));
  const cell = (way: Way, key: keyof Sample) => {
    const values = samples.get(way)!.map((s) => mb(s[key]));
    return `${mb(med(way, key)).toFixed(1)} MB (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
  };
  return table(
    ['Role, run as', 'idle', `after ${FALLBACK_TURNS + DATA_TURNS} turns`, 'peak (VmHWM)'],
    WAYS.flatMap((way) => [
      [`API, ${way.name}`, cell(way, 'apiIdleKb'), cell(way, 'apiAfterKb'), cell(way, 'apiPeakKb')],
      [`worker, ${way.name}`, cell(way, 'workerIdleKb'), cell(way, 'workerAfterKb'), cell(way, 'workerPeakKb')],
    ]),
  );
}

/** The run's record: a file of its own under docs/benchmarks/roles/. */
function renderRunRecord(samples: Map<Way, Sample[]>, machine: MachineInfo, seconds: number): string {
  const med = (way: Way, key: keyof Sample) => median(samples.get(way)!.map((s) => s[key]));
  const [tsx, tsxPrebuilt, compiled] = WAYS;
  const saving = (from: Way, key: keyof Sample) =>
    `${mb(med(from, key) - med(compiled, key)).toFixed(1)} MB (${((1 - med(compiled, key) / med(from, key)) * 100).toFixed(0)} %)`;
  const savings = (from: Way) =>
    `the API ${saving(from, 'apiIdleKb')} idle and ${saving(from, 'apiAfterKb')} after the turns; ` +
    `the worker ${saving(from, 'workerIdleKb')} idle and ${saving(from, 'workerAfterKb')} after the turns`;
  return [
    `# Resident memory of the roles (npm run bench:roles): run of ${machine.date}`,
    '',
    'Written by `npm run bench:roles` ([the method](../../benchmarks.md#resident-memory-of-the-roles-npm-run-benchroles)).',
    '',
    table(['Machine', ''], machineRows(machine)),
    '',
    rolesTable(samples),
    '',
    ...WAYS.map((way) => `- ${way.name}: ${way.how}.`),
    `- Compiled against tsx as \`npm run api\` / \`npm run worker\` run: ${savings(tsx)}.`,
    `- Compiled against tsx with the prebuilt bundle (what tsx itself costs): ${savings(tsxPrebuilt)}.`,
    `- The worker was polling after ${WAYS.map((way) => `${(med(way, 'workerReadyMs') / 1000).toFixed(1)} s (${way.name})`).join(', ')}, median.`,
    `- Medians of ${ROUNDS} rounds (range in brackets); each round starts the three in a rotated order. Idle: ` +
      `VmRSS ${IDLE_MS / 1000} s after the process was ready. The turns: ${FALLBACK_TURNS} fallback turns ` +
      `("thanks!") and ${DATA_TURNS} data questions ("${DATA_QUESTION}") by a user with the demo history, ` +
      'one at a time, `"stream": false`; then 2 s. Only the node process is counted: the worker’s Python gates ' +
      'processes and sandbox runs are processes of their own. MB = 10⁶ bytes.',
    `- Load average as the run ended: ${machine.load.map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min). The whole run took ${seconds.toFixed(0)} s.`,
    '',
  ].join('\n');
}

/**
 * The generated part of docs/benchmarks.md's section: the latest run's table and the links to every record
 * (`records`: file names under docs/benchmarks/roles/, newest first, the latest run's included).
 */
function renderDocSection(samples: Map<Way, Sample[]>, machine: MachineInfo, records: readonly string[]): string {
  return [
    `Latest run: ${machine.date}, medians of ${ROUNDS} rounds (${recordLink('roles', records[0])}: the machine, what each way is and what compiling saves).`,
    '',
    rolesTable(samples),
    '',
    `Every run's record: ${records.map((file) => recordLink('roles', file)).join(', ')}.`,
  ].join('\n');
}

async function run(): Promise<void> {
  useEphemeralMasterKey();
  const startedAt = nowMs();
  const running = new Set<LaunchedProcess>();
  const stoppers: Array<() => Promise<void>> = [() => stopEach(running)];
  const stopAll = async () => {
    for (const stop of stoppers.reverse())
      await stop().catch((err) => console.error('[bench:roles] stop failed:', err));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void stopAll().then(() => process.exit(130)));
  try {
    say('npm run build');
    execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
    say('starting Postgres and Temporal');
    const infra = await startInfrastructure();
    stoppers.push(() => infra.stop());
    const scripted = await startScriptedModelServer({ port: 0 });
    stoppers.push(() => scripted.close());
    const pool = new Pool({ connectionString: infra.databaseUrl, max: 2 });
    stoppers.push(() => pool.end());
    const env = {
      DATABASE_URL: infra.databaseUrl,
      TEMPORAL_ADDRESS: infra.temporalAddress,
      ANTHROPIC_BASE_URL: scripted.url,
      AMY_MAX_TURNS_PER_MINUTE: '100000',
    };

    const samples = new Map<Way, Sample[]>(WAYS.map((way) => [way, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < WAYS.length; i++) {
        const way = WAYS[(round + i) % WAYS.length];
        say(`round ${round + 1}/${ROUNDS}: ${way.name}`);
        samples.get(way)!.push(await measure(way, env, pool, running));
      }
    }

    const connection = await Connection.connect({ address: infra.temporalAddress });
    const temporalVersion = (await new Client({ connection }).workflowService.getSystemInfo({})).serverVersion;
    await connection.close();
    const machine = machineInfo(infra.postgresVersion, `server ${temporalVersion || 'unknown'}, dev server, in memory`);
    const record = renderRunRecord(samples, machine, (nowMs() - startedAt) / 1000);
    console.log(`\n${record}`);
    say(`record written to ${writeRunRecord('roles', machine.date, record)}`);
    const doc = renderDocSection(samples, machine, listRunRecords('roles'));
    say(`latest figures written to ${writeGeneratedSection('npm run bench:roles', doc)}`);
  } finally {
    await stopAll();
  }
}

run().catch((err: unknown) => {
  console.error('[bench:roles] failed:', err);
  process.exit(1);
});
