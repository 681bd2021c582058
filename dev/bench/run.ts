/**
 * `npm run bench`: the service's performance targets measured side by side in one run, against
 * throwaway Postgres and Temporal servers (or DATABASE_URL / TEMPORAL_ADDRESS), printed as a table. The
 * run's record goes to docs/benchmarks/bench/<time>.md and its table to docs/benchmarks.md's generated
 * block (./run-records.ts). Not a test: a missed target is reported, not turned into an exit code;
 * only a benchmark that could not run exits non-zero.
 *
 *   (a) fallback turn vs. a bare workflow with the same activities     target: ≤ 1.5× (medians)
 *   (b) event append → SSE client latency at 200 events/s              target: p99 ≤ 25 ms
 *   (c) 10,000 idle SSE subscribers on one compiled API process        target: ≤ 250 MB resident (and under tsx, informational)
 *   (d) gates per association finding in the warm Python process       target: p50 ≤ 25 ms (n 100), ≤ 250 ms (n 1000)
 *   (e) a sandboxed analysis run vs. the same run unconfined            informational: ratio and difference of medians
 *   (f) a data turn (pattern 2) vs. a bare workflow, same activities    informational: ratio of medians, where the time goes
 *   (g) CPU per knowledge turn, all processes, vs. a bare workflow       target: ≤ 1.3×; data turns informational
 *
 *   npm run bench -- [options]
 *     --only LETTERS   run only these sections, e.g. --only g or --only a,f; the table is printed and
 *                      nothing is written (a record and the latest verdicts hold a whole run's table)
 *     --help
 */
import { useEphemeralMasterKey } from '../stack/dev-keys';
import { execFileSync, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../platform/config';
import { defaultPythonPath } from '../../platform/gates';
import { PROJECT_ROOT } from '../../platform/project-root';
import { createEventLog } from '../../platform/event-log';
import { seedDemoHealthData } from '../synthetic-data/demo-user';
import { startApiServer } from '../../api/server';
import { startScriptedModelServer } from '../scripted-model/server';
import { createTurnWorker, quietBundlerLogger, turnWorkflowBundleOptions } from '../../worker/create-worker';
import { createStepDeps } from '../../worker/dependencies';
import { readOpenFilesLimit, stopApiProcesses } from './api-process';
import type { BareActivities } from './bare-workflow';
import { checkDataTurn, DATA_QUESTION, measureDataTurnOverhead } from './data-turn-overhead';
import { createBenchUser } from './fixtures';
import { measureGatesPerFinding } from './gates-per-finding';
import { newAgent } from './http-client';
import { measureIdleSubscribers } from './idle-subscribers';
import { usageFromHeader, optionsOrUsage } from './command-line';
import { startInfrastructure } from './infrastructure';
import { QUESTIONS } from './load-driver';
import { stopRoleProcesses } from './load-processes';
import { RoleCgroups } from './proc-cpu';
import {
  dataTurnOverheadSection,
  failedSection,
  gatesPerFindingSection,
  idleSubscribersSection,
  machineInfo,
  renderDocSection,
  renderRunRecord,
  sandboxOverheadSection,
  sseLatencySection,
  TARGETS,
  turnCpuSection,
  turnOverheadSection,
  type Section,
} from './report';
import { listRunRecords, writeGeneratedSection, writeRunRecord } from './run-records';
import { measureSandboxOverhead } from './sandbox-overhead';
import { measureSseLatency } from './sse-latency';
import { nowMs } from './stats';
import { measureTurnCpu, startTurnCpuStack, type TurnKindSpec } from './turn-cpu';
import { measureTurnOverhead } from './turn-overhead';

const TURN_OVERHEAD = { warmupRuns: 5, measuredRuns: 30 };
const SSE_LATENCY = { eventsPerSecond: 200, seconds: 10 };
const IDLE_SUBSCRIBERS = { turns: 100, subscribersPerTurn: 100, batchSize: 500 };
const GATES_PER_FINDING = { sizes: [100, 1000], runs: 40 };
/** Each run starts an interpreter and imports pandas (most of a second): 6 series × 10 runs is about 50 s. */
const SANDBOX_OVERHEAD = { days: 180, runs: 10 };
/** A data turn runs the sandbox (most of a second) and 16 activities to (a)'s 5: 13 rounds are about 30 s. */
const DATA_TURN_OVERHEAD = { warmupRuns: 3, measuredRuns: 10 };
/**
 * (g): as many in flight as the machine has cores, so batches keep it busy without queueing much.
 * Knowledge turns take about 0.25 s of CPU: 5 rounds of 8 are about 30 s with the bare batches and the
 * warm-up. Data turns about 0.8 s (the sandbox): 3 rounds of 4, about 25 s.
 */
const TURN_CPU_CONCURRENCY = 2;
const KNOWLEDGE_TURN_CPU: TurnKindSpec = {
  name: 'Knowledge turn',
  question: QUESTIONS.knowledge.question,
  check({ agents_used }) {
    if (agents_used.join() !== QUESTIONS.knowledge.agentsUsed) {
      throw new Error(`the knowledge turn ran ${agents_used.join(', ') || 'no agent'}`);
    }
  },
  healthData: true,
  perBatch: 8,
  rounds: 5,
};
const DATA_TURN_CPU: TurnKindSpec = {
  name: 'Data turn (pattern 2)',
  question: DATA_QUESTION,
  check: checkDataTurn,
  healthData: true,
  perBatch: 4,
  rounds: 3,
};

const SECTIONS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'] as const;
type SectionLetter = (typeof SECTIONS)[number];

const USAGE = usageFromHeader(__filename, 'bench');

/** The sections asked for (all by default); null for --help. */
function parseOptions(argv: string[]): Set<SectionLetter> | null {
  const { values } = parseArgs({
    args: argv,
    options: { only: { type: 'string' }, help: { type: 'boolean' }, 'fd-limit-raised': { type: 'boolean' } },
  });
  if (values.help) return null;
  if (values.only === undefined) return new Set(SECTIONS);
  const letters = values.only.split(',').map((l) => l.trim().toLowerCase());
  const unknown = letters.filter((l) => !(SECTIONS as readonly string[]).includes(l));
  if (unknown.length || letters.length === 0) {
    throw new Error(`--only takes section letters ${SECTIONS.join(', ')} separated by commas, not ${values.only}`);
  }
  return new Set(letters as SectionLetter[]);
}

/** Each idle subscriber is one socket in this process and one in the API's, plus room for the rest. */
const OPEN_FILES_NEEDED = IDLE_SUBSCRIBERS.turns * IDLE_SUBSCRIBERS.subscribersPerTurn + 1024;
const OPEN_FILES_WANTED = 65_536;
const FD_LIMIT_RAISED_FLAG = '--fd-limit-raised';

const say = (msg: string) => console.log(`[bench] ${msg}`);

/**
 * Node cannot raise its own open-files limit, so when it is too low we run again under a shell that
 * raised it (to the hard limit if 65536 is not allowed). The API child inherits the raised limit.
 */
function rerunWithMoreOpenFiles(current: number): void {
  say(`open-files limit ${current} < ${OPEN_FILES_NEEDED}: running again with it raised`);
  const script = `ulimit -n ${OPEN_FILES_WANTED} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; ` + 'exec "$0" "$@"';
  const args = [process.execPath, '--import', 'tsx', __filename, ...process.argv.slice(2), FD_LIMIT_RAISED_FLAG];
  const child = spawn('bash', ['-c', script, ...args], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/** A workflow bundle; the turn's as every worker of the service runs it (turnWorkflowBundleOptions). */
async function bundle(options: Parameters<typeof bundleWorkflowCode>[0]): Promise<string> {
  return (await bundleWorkflowCode({ ...options, logger: quietBundlerLogger })).code;
}

const bareActivities: BareActivities = { noOp: async () => undefined };

async function run(only: Set<SectionLetter>): Promise<number> {
  const all = only.size === SECTIONS.length;
  useEphemeralMasterKey();
  const startedAt = nowMs();
  const stoppers: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  let interrupted = false;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stoppers.reverse()) await stop().catch((err) => console.error('[bench] stop failed:', err));
    })());
  // `on`, not `once`: Ctrl-C reaches us both from the terminal and forwarded by a re-running parent, and
  // a second signal must not kill the process halfway through stopping its servers.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      interrupted = true;
      void stopAll().then(() => process.exit(130));
    });
  }

  const openFiles = readOpenFilesLimit('self');
  if (openFiles < OPEN_FILES_NEEDED) {
    say(`open-files limit is ${openFiles}, below the ${OPEN_FILES_NEEDED} measurement (c) needs; it may fail`);
  }
  // Worker and connection chatter would drown the table; warnings and errors still come through.
  Runtime.install({ logger: new DefaultLogger('WARN') });

  try {
    say('starting Postgres and Temporal');
    const infra = await startInfrastructure();
    stoppers.push(() => infra.stop());

    say('bundling the turn workflow and the bare workflow');
    const turnBundle = await bundle(turnWorkflowBundleOptions);
    const bareBundle = await bundle({ workflowsPath: require.resolve('./bare-workflow') });

    const scripted = await startScriptedModelServer({ port: 0 });
    stoppers.push(() => scripted.close());
    const suffix = Date.now().toString(36);
    const config = loadConfig({
      DATABASE_URL: infra.databaseUrl,
      TEMPORAL_ADDRESS: infra.temporalAddress,
      TEMPORAL_TASK_QUEUE: `amy-bench-${suffix}`,
      ANTHROPIC_BASE_URL: scripted.url,
      PORT: '0',
      LOG_LEVEL: 'error',
      // The bench starts its turns back to back, faster than a person would: the per-user creation rate
      // limit is for clients, not for measuring the service.
      AMY_MAX_TURNS_PER_MINUTE: '100000',
    });
    const bareTaskQueue = `amy-bench-bare-${suffix}`;

    const deps = createStepDeps(config);
    stoppers.push(() => deps.close());
    const workerConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    stoppers.push(() => workerConnection.close());
    const workers = [
      await createTurnWorker({
        connection: workerConnection,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        deps,
        dataConverter: deps.dataConverter,
        workflowBundle: { code: turnBundle },
      }),
      await Worker.create({
        connection: workerConnection,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: bareTaskQueue,
        activities: bareActivities,
        workflowBundle: { code: bareBundle },
      }),
    ];
    const workersRunning = Promise.all(workers.map((w) => w.run()));
    stoppers.push(async () => {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await workersRunning;
    });

    const api = await startApiServer(config);
    stoppers.push(() => api.close());
    const clientConnection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
    stoppers.push(() => clientConnection.close());
    const temporal = new Client({
      connection: clientConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      dataConverter: deps.dataConverter,
    });
    // The benchmark's own writer, standing in for a worker: a pool of its own, apart from the API's.
    const pool = new Pool({ connectionString: infra.databaseUrl, max: 4 });
    stoppers.push(() => pool.end());
    const events = createEventLog(pool);
    const agent = newAgent();
    stoppers.push(async () => agent.destroy());
    // Registered last so they are stopped first: the API process of (c), the roles of (g), if a signal
    // interrupts them.
    stoppers.push(stopApiProcesses, stopRoleProcesses);

    const sections: Section[] = [];
    let anyFailed = false;
    const measure = async (name: string, work: () => Promise<Section>) => {
      // Each name starts with its section's letter in brackets: "(g) …".
      if (!only.has(name[1] as SectionLetter)) return;
      say(`measuring ${name}`);
      const measureStartedAt = nowMs();
      try {
        sections.push(await work());
        say(`${name} took ${((nowMs() - measureStartedAt) / 1000).toFixed(0)} s`);
      } catch (err) {
        console.error(`[bench] ${name} failed:`, err);
        anyFailed = true;
        sections.push(failedSection(name, err));
      }
    };

    await measure('(a) fallback turn overhead', async () => {
      const { apiKey } = await createBenchUser(pool, 'turns');
      const result = await measureTurnOverhead({
        apiUrl: api.url,
        apiKey,
        agent,
        temporal,
        bareTaskQueue,
        ...TURN_OVERHEAD,
      });
      return turnOverheadSection(result);
    });
    await measure('(b) append → SSE latency', async () => {
      const result = await measureSseLatency({ apiUrl: api.url, pool, events, agent, ...SSE_LATENCY });
      return sseLatencySection(result, SSE_LATENCY.eventsPerSecond);
    });
    await measure('(c) idle SSE subscribers', async () => {
      say('(c) building the compiled API (npm run build)');
      execFileSync('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
      const idle = (api: 'compiled' | 'tsx') =>
        measureIdleSubscribers({
          databaseUrl: infra.databaseUrl,
          temporalAddress: infra.temporalAddress,
          pool,
          events,
          ...IDLE_SUBSCRIBERS,
          api,
        });
      const compiled = await idle('compiled');
      return idleSubscribersSection(compiled, await idle('tsx'), TARGETS.idleSubscribers);
    });
    await measure('(d) gates per finding', async () =>
      gatesPerFindingSection(await measureGatesPerFinding({ python: defaultPythonPath(), ...GATES_PER_FINDING })),
    );
    await measure('(e) sandbox run overhead', async () =>
      sandboxOverheadSection(await measureSandboxOverhead({ python: defaultPythonPath(), ...SANDBOX_OVERHEAD })),
    );

    await measure('(f) data turn overhead', async () => {
      const { userId, apiKey } = await createBenchUser(pool, 'data_turns');
      await seedDemoHealthData(pool, userId);
      const result = await measureDataTurnOverhead({
        apiUrl: api.url,
        apiKey,
        agent,
        temporal,
        bareTaskQueue,
        ...DATA_TURN_OVERHEAD,
      });
      return dataTurnOverheadSection(result, DATA_QUESTION);
    });

    await measure('(g) CPU per turn against the bare floor', async () => {
      // Every process of the run, Postgres and Temporal included, into a cgroup of its role (proc-cpu.ts).
      const cgroups = RoleCgroups.create('bench');
      if (cgroups) stoppers.push(async () => cgroups.remove());
      else say('no writable cpuacct cgroup: CPU by process from /proc, without the sandbox runs');
      const stack = await startTurnCpuStack({
        databaseUrl: infra.databaseUrl,
        temporalAddress: infra.temporalAddress,
        turnBundleCode: turnBundle,
        bareBundleCode: bareBundle,
        cgroups,
      });
      try {
        const common = { stack, pool, temporal, agent, concurrency: TURN_CPU_CONCURRENCY };
        const knowledge = await measureTurnCpu({ ...common, kind: KNOWLEDGE_TURN_CPU });
        say(
          `(g) knowledge turn ${knowledge.turn.msPerRun.toFixed(0)} ms, bare ${knowledge.bare.msPerRun.toFixed(0)} ms`,
        );
        const data = await measureTurnCpu({ ...common, kind: DATA_TURN_CPU });
        return turnCpuSection([
          { result: knowledge, target: TARGETS.knowledgeTurnCpuRatio },
          { result: data, target: null },
        ]);
      } finally {
        await stack.stop();
      }
    });

    // Measurements cut short by a signal would overwrite the last good report with failures.
    if (interrupted) return 130;
    const temporalVersion = (await temporal.workflowService.getSystemInfo({})).serverVersion || 'unknown';
    const machine = machineInfo(
      infra.postgresVersion + (process.env.DATABASE_URL ? ' (DATABASE_URL)' : ', local, fsync off'),
      `server ${temporalVersion}` + (process.env.TEMPORAL_ADDRESS ? ' (TEMPORAL_ADDRESS)' : ', dev server, in memory'),
    );
    const record = renderRunRecord(machine, sections, (nowMs() - startedAt) / 1000);
    console.log(`\n${record}`);
    if (all) {
      say(`record written to ${writeRunRecord('bench', machine.date, record)}`);
      const doc = renderDocSection(machine, sections, listRunRecords('bench'));
      say(`latest verdicts written to ${writeGeneratedSection('npm run bench', doc)}`);
    } else say(`only ${[...only].join(', ')}: nothing written`);
    return anyFailed ? 1 : 0;
  } finally {
    say('stopping');
    await stopAll();
  }
}

async function main(): Promise<void> {
  const only = optionsOrUsage(parseOptions, USAGE);
  if (!only) return;
  const openFiles = readOpenFilesLimit('self');
  if (only.has('c') && openFiles < OPEN_FILES_NEEDED && !process.argv.includes(FD_LIMIT_RAISED_FLAG)) {
    rerunWithMoreOpenFiles(openFiles);
    return;
  }
  // Exit explicitly: a stray handle (a pool's idle timer, an unref'd socket) must not keep the run alive.
  process.exit(await run(only));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
