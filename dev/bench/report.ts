/**
 * Turns the measurements into one table (targets and whether they were met) and renders it twice: the run's
 * record (the machine, the table and every measurement's details; a file of its own under
 * docs/benchmarks/bench/) and the part of docs/benchmarks.md the run rewrites (the table and the links to
 * every record). Writing them is ./run-records.ts's job.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { GatesPerFindingResult, GatesSeriesResult } from './gates-per-finding';
import type { IdleSubscribersResult } from './idle-subscribers';
import type { SandboxOverheadResult } from './sandbox-overhead';
import type { SseLatencyResult } from './sse-latency';
import { formatMs, type Summary } from './stats';
import type { TurnOverheadResult } from './turn-overhead';
import { overlapInWords, shapeKey } from './history-shape';
import type { CpuSeries, TurnCpuResult } from './turn-cpu';
import { recordLink } from './run-records';

export const TARGETS = {
  turnOverheadRatio: 1.5,
  /** (g) A knowledge turn's CPU, all processes, against the bare floor's with the same activities. */
  knowledgeTurnCpuRatio: 1.3,
  sseLatencyP99Ms: 25,
  idleSubscribers: 10_000,
  /** Decimal megabytes (10⁶ bytes), the stricter reading of "250 MB". */
  idleRssMb: 250,
  /** Median milliseconds of one association finding's gates, by its number of observations. */
  gatesAssociationP50Ms: { 100: 25, 1000: 250 } as Readonly<Record<number, number>>,
  /** Median milliseconds of one warm sandbox run (the realistic body), its input files and envelope included. */
  warmSandboxP50Ms: 100,
} as const;

interface ResultRow {
  measurement: string;
  result: string;
  target: string;
  /** null: informational, no target of its own. */
  met: boolean | null;
}

export interface Section {
  rows: ResultRow[];
  details: string[];
}

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  postgres: string;
  temporal: string;
  /** 1-, 5- and 15-minute load averages when the run ended: other work on the machine shows in every number. */
  load: number[];
  date: string;
}

export function machineInfo(postgres: string, temporal: string): MachineInfo {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1].trim() ?? os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGb: os.totalmem() / 1024 ** 3,
    node: process.version,
    postgres,
    temporal,
    load: os.loadavg(),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

const percentiles = (s: Summary, which: Array<'min' | 'p50' | 'p95' | 'p99' | 'max'>) =>
  which.map((p) => `${p} ${formatMs(s[p])}`).join(', ');
const signedMs = (ms: number) => `${ms < 0 ? '−' : '+'}${formatMs(Math.abs(ms))}`;
const megabytes = (kb: number) => (kb * 1024) / 1e6;
/** "4 activities and 3 local activities" (`noun` before each kind, e.g. "no-op "): the local ones only when any. */
const stepCounts = (h: { activities: number; localActivities: number }, noun = '') =>
  `${h.activities} ${noun}activities` + (h.localActivities ? ` and ${h.localActivities} ${noun}local activities` : '');
/** "16 no-op activities", and the local ones when a run recorded any. */
const noOps = (h: { activities: number; localActivities: number }) => stepCounts(h, 'no-op ');

/**
 * The informational row of a turn against the floor of its own shape (local activities kept local): against
 * it only the work inside the steps counts, not how many of them are full activities.
 */
function mirrorRows(section: string, r: TurnOverheadResult): ResultRow[] {
  if (!r.mirror) return [];
  return [
    {
      measurement: `${section} Same, against a floor with the turn's own shape (${noOps(r.mirror.history)})`,
      result: `${r.mirror.ratio.toFixed(2)}× (bare ${percentiles(r.mirror.runs, ['p50', 'p95'])})`,
      target: '— (informational)',
      met: null,
    },
  ];
}

export function turnOverheadSection(r: TurnOverheadResult): Section {
  const closeRatio = r.turnToClose.p50 / r.bare.p50;
  return {
    rows: [
      {
        measurement: '(a) Fallback turn: POST sent → `turn.completed` received',
        result: `${percentiles(r.turn, ['p50', 'p95'])} (n=${r.turn.n})`,
        target: '',
        met: null,
      },
      {
        measurement: `(a) Bare workflow: ${noOps(r.bareHistory)}, start → result`,
        result: `${percentiles(r.bare, ['p50', 'p95'])} (n=${r.bare.n})`,
        target: '',
        met: null,
      },
      {
        measurement: '(a) Turn overhead: ratio of medians',
        result: `${r.ratio.toFixed(2)}×`,
        target: `≤ ${TARGETS.turnOverheadRatio}×`,
        met: r.ratio <= TARGETS.turnOverheadRatio,
      },
      {
        measurement: "(a) Same, with the turn's clock stopped when its workflow closes",
        result: `${closeRatio.toFixed(2)}× (turn ${percentiles(r.turnToClose, ['p50', 'p95'])})`,
        target: '',
        met: null,
      },
      ...mirrorRows('(a)', r),
    ],
    details: [
      `(a) Steps per run, counted from the recorded histories: turn ${stepCounts(r.turnHistory)}` +
        `, the floor ${noOps(r.bareHistory)} (one per step of the turn)` +
        (r.mirror ? `, the floor of the turn's own shape ${noOps(r.mirror.history)}` : '') +
        `; the turn's stream carried ${r.eventsPerTurn} events.`,
      "(a) Where the time went (p50 per run, from the histories' server timestamps): tasks waiting to be " +
        `picked up by a worker: turn ${formatMs(r.turnHistory.dispatch.p50)}, bare ${formatMs(r.bareHistory.dispatch.p50)}; ` +
        `workflow tasks running on the worker: turn ${formatMs(r.turnHistory.workflowTask.p50)}, ` +
        `bare ${formatMs(r.bareHistory.workflowTask.p50)}; ` +
        `activities executing: turn ${formatMs(r.turnHistory.activity.p50)}, bare ${formatMs(r.bareHistory.activity.p50)}. ` +
        `POST → 201 took ${percentiles(r.turnPost, ['p50', 'p95'])}.`,
      '(a) Runs take turns (turn, floor' +
        (r.mirror ? ", the turn's own shape" : '') +
        '; which goes first rotating), one at a time, after warm-up. The headline turn clock stops ' +
        'when `turn.completed` arrives, one workflow task before its workflow closes; the bare clock stops at `result()`.',
    ],
  };
}

export function dataTurnOverheadSection(r: TurnOverheadResult, question: string): Section {
  const closeRatio = r.turnToClose.p50 / r.bare.p50;
  const t = r.turnHistory;
  const b = r.bareHistory;
  const slowestFirst = [...t.byType].sort((x, y) => y.ms.p50 - x.ms.p50);
  const share = (ms: number) => `${((100 * ms) / t.activity.p50).toFixed(0)} %`;
  const { validator } = r.lastResult;
  return {
    rows: [
      {
        measurement: '(f) Data turn (pattern 2): POST sent → `turn.completed` received',
        result: `${percentiles(r.turn, ['p50', 'p95'])} (n=${r.turn.n})`,
        target: '',
        met: null,
      },
      {
        measurement: `(f) Bare workflow: ${noOps(b)}, start → result`,
        result: `${percentiles(r.bare, ['p50', 'p95'])} (n=${r.bare.n})`,
        target: '',
        met: null,
      },
      {
        measurement: '(f) Data turn against the bare floor: ratio of medians',
        result: `${r.ratio.toFixed(2)}× (${signedMs(r.turn.p50 - r.bare.p50)})`,
        target: '— (informational)',
        met: null,
      },
      {
        measurement: "(f) Same, with the turn's clock stopped when its workflow closes",
        result: `${closeRatio.toFixed(2)}× (turn ${percentiles(r.turnToClose, ['p50', 'p95'])})`,
        target: '— (informational)',
        met: null,
      },
      ...mirrorRows('(f)', r),
    ],
    details: [
      `(f) "${question}", asked by a user with the demo health data (180 days). Steps per run, counted ` +
        `from the recorded histories: turn ${stepCounts(t)}, the floor ${noOps(b)}` +
        (r.mirror ? `, the floor of the turn's own shape ${noOps(r.mirror.history)}` : '') +
        `, the same in every run and never more than ${t.maxConcurrentActivities} outstanding at a time, so ` +
        `the bare workflows await their no-ops one by one: ${t.shape}. Each turn's stream carried ${r.eventsPerTurn} ` +
        `events; the last ended with ${validator.findings_validated} validated, ${validator.findings_conditional} ` +
        `conditional and ${validator.findings_rejected} rejected of ${validator.findings_total} finding.`,
      "(f) Where the turn's time went (p50 per run, from the histories' server timestamps): activities " +
        `executing ${formatMs(t.activity.p50)} (bare ${formatMs(b.activity.p50)}), of which ` +
        slowestFirst.map((s) => `${s.type} ${formatMs(s.ms.p50)} (${share(s.ms.p50)})`).join(', ') +
        '; tasks waiting to be picked up by a worker: turn ' +
        `${formatMs(t.dispatch.p50)}, bare ${formatMs(b.dispatch.p50)}; workflow tasks running on the worker: ` +
        `turn ${formatMs(t.workflowTask.p50)}, bare ${formatMs(b.workflowTask.p50)}. POST → 201 took ` +
        `${percentiles(r.turnPost, ['p50', 'p95'])}. Activity times include each task's round trip to the ` +
        `worker, which is what the bare workflow's ${formatMs(b.activity.p50)} for ${b.activities} no-ops is.`,
      `(f) The floor is the bare workflow's median: what Temporal alone costs here to run ${b.activities} ` +
        'activities one after another. The ratio says how many floors a data turn takes; the difference of ' +
        "medians is the service's own work on top of that floor, most of it the activities above. Runs " +
        'take turns, one at a time, after warm-up (which pays the sandbox probe and the ' +
        "gates process start). The scripted model answers at once and streams with no delay, so a model step's " +
        'time here is the service handling the call (the request, the streamed deltas appended as events, the ' +
        'cost ledger), not a model thinking; with a real model those steps would dominate instead.',
    ],
  };
}

/**
 * (g) One row pair per turn kind and a ratio row; `target` null for an informational kind (data turns).
 * The notes split each series by process and say what the floor ran.
 */
export function turnCpuSection(results: Array<{ result: TurnCpuResult; target: number | null }>): Section {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const split = (s: CpuSeries) => s.byRole.map((r) => `${r.role} ${ms(r.msPerRun)}`).join(', ');
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;
  const steps = (r: TurnCpuResult) => r.shape.activities + r.shape.localActivities;
  return {
    rows: results.flatMap(({ result: r, target }): ResultRow[] => [
      {
        measurement: `(g) ${r.kind.name}: CPU per turn, the service's processes`,
        result: `${ms(r.turn.msPerRun)} (n=${r.turn.runs}, ${r.concurrency} in flight)`,
        target: '',
        met: null,
      },
      {
        measurement: `(g) Bare workflow, ${steps(r)} no-op activities (one per step of the turn): CPU per run`,
        result: `${ms(r.bare.msPerRun)} (n=${r.bare.runs}, ${r.concurrency} in flight)`,
        target: '',
        met: null,
      },
      {
        measurement: `(g) ${r.kind.name} CPU against the bare floor: ratio`,
        result: `${r.ratio.toFixed(2)}× (rounds ${range(r.roundRatios)})`,
        target: target === null ? '— (informational)' : `≤ ${target}×`,
        met: target === null ? null : r.ratio <= target,
      },
      ...(r.mirror
        ? [
            {
              measurement: `(g) Same, against a floor with the turn's own shape (${noOps(r.shape)})`,
              result: `${r.mirror.ratio.toFixed(2)}× (bare ${ms(r.mirror.bare.msPerRun)}; rounds ${range(r.mirror.roundRatios)})`,
              target: '— (informational)',
              met: null,
            },
          ]
        : []),
      {
        measurement:
          `(g) The least the ratio could read: the floor plus the turn's ` +
          `${r.lowestReachable.roles.map((role) => role.role).join(' and ')} (the floor runs on neither), ` +
          `its worker and Temporal as cheap as the floor's`,
        result:
          `${r.lowestReachable.ratio.toFixed(2)}× (` +
          `${r.lowestReachable.roles.map((role) => `${role.role} ${ms(role.msPerRun)}`).join(', ')} ` +
          `on a floor of ${ms(r.bare.msPerRun)})`,
        target: '— (informational)',
        met: null,
      },
    ]),
    details: results.flatMap(({ result: r }) => [
      `(g) ${r.kind.name} ("${r.kind.question}"): ${r.kind.rounds} rounds of a batch of ${r.kind.perBatch} ` +
        `turns and a batch of ${r.kind.perBatch} bare workflows of each floor, ${r.concurrency} in flight, ` +
        `taking turns, after one warm-up batch of each. CPU per turn by process: ${split(r.turn)}; per bare ` +
        `workflow: ${split(r.bare)}` +
        (r.mirror ? `; per bare workflow of the turn's own shape: ${split(r.mirror.bare)}` : '') +
        `. Not counted: the scripted model, which stands in for Anthropic's API (${ms(r.turn.modelMsPerRun)} ` +
        `per turn), and the bench process driving the runs (${ms(r.turn.driverMsPerRun)} per turn, ` +
        `${ms(r.bare.driverMsPerRun)} per bare workflow)` +
        (r.turn.otherMsPerRun + r.bare.otherMsPerRun > 0.5
          ? ` and its other children (${ms(r.turn.otherMsPerRun)}, ${ms(r.bare.otherMsPerRun)})`
          : '') +
        `. Batches took ${r.turn.wallSeconds.toFixed(1)} s (turns) and ${r.bare.wallSeconds.toFixed(1)} s ` +
        `(bare) in all.`,
      `(g) ${r.kind.name}: the steps, from the first turn's history, run by the floor ${overlapInWords(r.shape)}: ` +
        `${shapeKey(r.shape.steps)}; the same in every measured turn (checked). The floor's own history ` +
        `recorded ${r.bareShape.activities} activities and ${r.bareShape.localActivities} local activities. ` +
        'CPU read from ' +
        (r.accounting === 'cgroup'
          ? 'a cpuacct cgroup per process role (sandbox runs and the gates process counted with the worker).'
          : '/proc (no writable cpuacct cgroup): sandbox runs are missing from the worker.'),
    ]),
  };
}

export function sseLatencySection(r: SseLatencyResult, eventsPerSecond: number): Section {
  return {
    rows: [
      {
        measurement: `(b) Append → SSE client latency at ${eventsPerSecond} events/s`,
        result: `${percentiles(r.latency, ['p50', 'p99', 'max'])} (n=${r.latency.n})`,
        target: `p99 ≤ ${TARGETS.sseLatencyP99Ms} ms`,
        met: r.latency.p99 <= TARGETS.sseLatencyP99Ms,
      },
      {
        measurement: '(b) Delivery',
        result:
          `${r.received}/${r.sent} events` + (r.inOrderNoGaps ? ', in order, no gaps' : `: ${r.problems.join('; ')}`),
        target: 'all, in order, no gaps',
        met: r.inOrderNoGaps,
      },
    ],
    details: [
      `(b) Achieved send rate ${r.achievedRate.toFixed(1)} events/s; the append transaction itself took ` +
        `${percentiles(r.append, ['p50', 'p99', 'max'])}.`,
    ],
  };
}

/**
 * (c): the target is read on the API as the images run it (compiled, plain node); the same API run from
 * TypeScript under tsx, as `npm start` runs it, is shown beside it (tsx itself holds tens of MB).
 */
export function idleSubscribersSection(
  compiled: IdleSubscribersResult,
  underTsx: IdleSubscribersResult,
  target: number,
): Section {
  const memory = (r: IdleSubscribersResult) =>
    `${megabytes(r.totalKb).toFixed(1)} MB total (baseline ${megabytes(r.baselineKb).toFixed(1)} MB, ` +
    `+${megabytes(r.totalKb - r.baselineKb).toFixed(1)} MB, ${r.kbPerSubscriber.toFixed(1)} KiB/subscriber)`;
  const live = compiled.liveness;
  const subscribers = compiled.subscribers.toLocaleString('en-US');
  return {
    rows: [
      {
        measurement: `(c) API resident memory with ${subscribers} idle SSE subscribers (compiled API, as the images run it)`,
        result: memory(compiled),
        target: `${target.toLocaleString('en-US')} subscribers in ≤ ${TARGETS.idleRssMb} MB`,
        met: compiled.subscribers >= target && megabytes(compiled.totalKb) <= TARGETS.idleRssMb,
      },
      {
        measurement: `(c) Same, the API run from TypeScript under tsx (as \`npm start\` runs it)`,
        result: `${memory(underTsx)}, ${underTsx.subscribers.toLocaleString('en-US')} subscribers`,
        target: '— (informational)',
        met: null,
      },
      {
        measurement: '(c) Still serving with all subscribers open',
        result:
          `${live.delivered}/${live.expected} subscribers of one turn got a new event` +
          (live.lastDeliveryMs === null ? '' : ` within ${formatMs(live.lastDeliveryMs)}`) +
          (live.strayDeliveries ? `; ${live.strayDeliveries} deliveries to other turns` : ''),
        target: 'all, and no others',
        met: live.delivered === live.expected && live.strayDeliveries === 0,
      },
    ],
    details: [compiled, underTsx].map(
      (r) =>
        `(c) ${r.api === 'compiled' ? 'Compiled API' : 'API under tsx'}: ${r.turns} queued turns × ` +
        `${r.subscribers / r.turns} subscribers, connected in ${r.connectSeconds.toFixed(1)} s; peak resident set ` +
        `(VmHWM) ${megabytes(r.peakKb).toFixed(1)} MB; API open-files limit ${r.apiOpenFilesLimit}. ` +
        'MB = 10⁶ bytes, KiB = 1024 bytes.',
    ),
  };
}

export function gatesPerFindingSection(r: GatesPerFindingResult): Section {
  const ofKind = (kind: GatesSeriesResult['kind']) => r.series.filter((s) => s.kind === kind);
  const associationRows = ofKind('association').map((s): ResultRow => {
    const target = TARGETS.gatesAssociationP50Ms[s.n];
    return {
      measurement: `(d) Gates per finding, association (all 7 gates, bootstrap of 1000 resamples), n = ${s.n}`,
      result: `${percentiles(s.ms, ['p50', 'p95', 'max'])} (n=${s.ms.n})`,
      target: target === undefined ? '' : `p50 ≤ ${target} ms`,
      met: target === undefined ? null : s.ms.p50 <= target,
    };
  });
  const informational = (kind: 'trend' | 'scalar', what: string): ResultRow => ({
    measurement: `(d) Gates per finding, ${what}`,
    result: ofKind(kind)
      .map((s) => `n = ${s.n}: ${percentiles(s.ms, ['p50', 'p95'])}`)
      .join('; '),
    target: '',
    met: null,
  });
  const windows = (kind: GatesSeriesResult['kind']) =>
    ofKind(kind)
      .map((s) => `${s.days.toLocaleString('en-US')} days for n = ${s.n}`)
      .join(', ');
  const verdicts = r.series.map((s) => `${s.kind} n = ${s.n} ${s.verdict} (${s.gatesRun} gates)`).join(', ');
  return {
    rows: [
      ...associationRows,
      informational('trend', 'trend (prior half vs recent half)'),
      informational('scalar', 'scalar (a mean)'),
    ],
    details: [
      `(d) One long-lived \`python -m gates\` process (createGatesRunner), warmed by one request that paid ` +
        `its start-up, the numpy/scipy import and one association at the smallest n: ${formatMs(r.warmupMs)}. ` +
        'Then one finding per request, as a turn sends it, timed from `run([series])` to its outcome; kinds and ' +
        'sizes take turns.',
      `(d) n counts the observations the gates use (complete feature/target pairs for an association). With ` +
        `the synthetic person's missing days the windows span ${windows('association')} (association: active ` +
        `zone minutes → deep sleep) and ${windows('scalar')} (trend, scalar: resting heart rate). ` +
        `Verdicts: ${verdicts}.`,
    ],
  };
}

export function sandboxOverheadSection(r: SandboxOverheadResult): Section {
  const rows = (label: string, b: SandboxOverheadResult['trivial'], targeted: boolean): ResultRow[] => [
    {
      measurement: `(e) Warm sandbox run (${r.warm}), ${label}, ${r.days} days`,
      result:
        `warm ${percentiles(b.sandbox, ['p50', 'p95'])}; cold ${percentiles(b.cold, ['p50', 'p95'])}; ` +
        `floor ${percentiles(b.floor, ['p50', 'p95'])} (n=${b.sandbox.n} each)`,
      target: targeted ? `p50 ≤ ${TARGETS.warmSandboxP50Ms} ms` : '— (informational)',
      met: targeted ? b.sandbox.p50 <= TARGETS.warmSandboxP50Ms : null,
    },
    {
      measurement: `(e) Warm sandbox against the unconfined floor, ${label}: ratio and difference of medians`,
      result: `${b.ratio.toFixed(2)}× (${signedMs(b.overheadMs)}; best runs ${signedMs(b.overheadOfMinimaMs)})`,
      target: '— (informational)',
      met: null,
    },
  ];
  const { sandbox, cold, floor } = r.trivial;
  const runner = r.runnerWithoutBwrap;
  // Each step as p50 (best run): minima are steadier when the machine is busy with other work.
  const both = (s: Summary) => `${formatMs(s.p50)} (${formatMs(s.min)})`;
  const step = (from: Summary, to: Summary) => `${signedMs(to.p50 - from.p50)} (${signedMs(to.min - from.min)})`;
  return {
    rows: [
      ...rows('trivial body', r.trivial, false),
      ...rows('realistic body (mean RHR, last 90 days)', r.realistic, true),
    ],
    details: [
      `(e) Warm (${r.warm}): ${r.warm === 'fork' ? "each run is a child forked from the worker's fork server (zygote.py), which imported pandas once; the child takes the run's own uid, mount namespace, scratch and input, then the rlimits and seccomp, and runs one analysis" : 'each run is handed to a one-shot process started before it, pandas already imported'}. ` +
        'Cold (`AMY_SANDBOX_WARM=off`): bwrap, setpriv and a fresh interpreter per run, as before the warm sandbox.',
      '(e) The floor is `.venv/bin/python -s -B`, with the environment the sandbox sets (one BLAS thread, ' +
        '`PYTHONHASHSEED=0`, …), started fresh for each run on a script that imports pandas, reads the same daily ' +
        'summary from a temp file into `summary_df` (dates parsed) and runs the same body: no bwrap, no setpriv, ' +
        'no rlimits, no seccomp, and none of the other frames or composite features the runner builds. Every ' +
        'series, the sandbox included, writes its input files and (but for the warm sandbox) spawns its ' +
        'interpreter inside the timed span; the answers are checked to be equal. Series take turns, one run ' +
        'each, after one untimed run of each.',
      `(e) Where the cold sandbox's time goes, trivial body, p50 (best run): \`python -c "import pandas"\` alone ` +
        `${both(r.pandasImport)}; the floor ${both(floor)}; the sandbox's runner.py started directly, without ` +
        `bwrap (rlimits, seccomp, all four frames with the composite features, the envelope) ${both(runner)}, ` +
        `i.e. ${step(floor, runner)} over the floor; the cold sandbox ${both(cold)}, i.e. bwrap and setpriv ` +
        `${step(runner, cold)} over the runner; the warm sandbox ${both(sandbox)}. The floor's own spread, best ` +
        `run to p95: ${formatMs(floor.p95 - floor.min)}.`,
      `(e) The first warm run, which also probes once that confinement works here (and starts the fork ` +
        `server or the pool), took ${formatMs(r.firstRunMs)}; the first cold run, its probe included, ` +
        `${formatMs(r.firstColdRunMs)}.`,
    ],
  };
}

export function failedSection(measurement: string, err: unknown): Section {
  const message = err instanceof Error ? err.message : String(err);
  return { rows: [{ measurement, result: `did not run to the end: ${message}`, target: '', met: false }], details: [] };
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const metText = (met: boolean | null) => (met === null ? '' : met ? 'yes' : '**NO**');

/** The machine a run measured, as rows of a report's first table (shared by the benchmarks and the eval). */
export function machineRows(machine: MachineInfo): string[][] {
  return [
    ['CPU', machine.cpu],
    ['Cores', String(machine.cores)],
    ['Memory', `${machine.memoryGb.toFixed(1)} GiB`],
    ['Node', machine.node],
    ['Postgres', machine.postgres],
    ['Temporal', machine.temporal],
  ];
}

const resultsTable = (rows: readonly ResultRow[]) =>
  table(
    ['Measurement', 'Result', 'Target', 'Met'],
    rows.map((r) => [r.measurement, r.result, r.target, metText(r.met)]),
  );

/** The run's record: a file of its own under docs/benchmarks/bench/. */
export function renderRunRecord(machine: MachineInfo, sections: Section[], durationSeconds: number): string {
  return [
    `# Benchmarks (npm run bench): run of ${machine.date}`,
    '',
    'Written by `npm run bench` ([what each measurement is](../../benchmarks.md#benchmarks)).',
    '',
    table(
      ['Machine', ''],
      [
        ...machineRows(machine),
        ['Load average', `${machine.load.map((l) => l.toFixed(2)).join(', ')} (1, 5, 15 min, as the run ended)`],
      ],
    ),
    '',
    resultsTable(sections.flatMap((s) => s.rows)),
    '',
    ...sections.flatMap((s) => s.details).map((d) => `- ${d}`),
    `- The whole run took ${durationSeconds.toFixed(0)} s.`,
    '',
  ].join('\n');
}

/**
 * The generated part of docs/benchmarks.md's section: the latest run's table and the links to every record
 * (`records`: file names under docs/benchmarks/bench/, newest first, the latest run's included).
 */
export function renderDocSection(machine: MachineInfo, sections: Section[], records: readonly string[]): string {
  return [
    `Latest run: ${machine.date} (${recordLink('bench', records[0])}: the machine and every measurement's details).`,
    '',
    resultsTable(sections.flatMap((s) => s.rows)),
    '',
    `Every run's record: ${records.map((file) => recordLink('bench', file)).join(', ')}.`,
  ].join('\n');
}
