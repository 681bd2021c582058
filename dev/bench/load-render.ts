/**
 * `npm run load`'s markdown, from its numbers (./load-numbers.ts) alone: the run's record (a file of its own:
 * the settings, each phase's figures and verdict, and the notes that split them) and the part of
 * docs/benchmarks.md it rewrites (the latest run's table and the links to every record).
 */
import type { PacingOverrides } from '../scripted-model/pacing';
import { IN_FLIGHT_TARGET, type PhaseNumbers } from './load-numbers';
import type { CpuUsage } from './proc-cpu';
import { recordLink } from './run-records';
import { formatMs, type Summary } from './stats';

export interface RunInfo {
  date: string;
  cpu: string;
  cores: number;
  node: string;
  postgres: string;
  temporal: string;
  workers: number;
  apis: number;
  subscribers: number;
  chunkDelayMs: number;
  /** Realistic pacing's overrides (an empty object: its defaults), or null: the model answered at once. */
  pacing: PacingOverrides | null;
  warmup: number;
  loadBefore: number[];
  loadAfter: number[];
  commitTimestamps: boolean;
  clockDriftMs: number;
  memory: Array<{ role: string; peakMb: number; endMb: number }>;
  durationSeconds: number;
  /** CPU with the whole stack up and no turns. */
  idle: CpuUsage;
  /** Where CPU by role came from (dev/bench/proc-cpu.ts): cpuacct cgroups, or /proc without the sandbox runs. */
  cpuAccounting: 'cgroup' | 'proc';
  code: string;
  note: string | null;
  command: string;
}

const p = (s: Summary | null, which: Array<'p50' | 'p99' | 'max'> = ['p50', 'p99']) =>
  s && s.n > 0 ? which.map((w) => `${w} ${formatMs(s[w])}`).join(', ') : '—';
const cores = (c: number) => c.toFixed(2);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function describeLoad(n: PhaseNumbers): string {
  const loop =
    n.inFlightTarget !== null
      ? `${n.inFlightTarget} in flight, started at ${Number(n.rate?.toFixed(2))}/s`
      : n.rate === undefined
        ? `closed loop, ${n.concurrency} in flight`
        : `open loop, ${n.rate}/s`;
  return `${n.kinds.join('+')} × ${n.turns} (${loop})`;
}

/** How the scripted model was paced, for the report's settings. */
function describeModelPace(pacing: PacingOverrides | null, chunkDelayMs: number): string {
  const chunk = `${chunkDelayMs} ms before each streamed delta`;
  if (!pacing) return `own process, answering at once; ${chunk}`;
  const set = [
    pacing.firstTokenMs === undefined ? null : `time to first token ${pacing.firstTokenMs} ms`,
    pacing.tokensPerSecond === undefined ? null : `${pacing.tokensPerSecond} tokens/s`,
    pacing.tokensPerDelta === undefined ? null : `${pacing.tokensPerDelta} tokens per delta`,
    pacing.outputScale === undefined ? null : `output lengths × ${pacing.outputScale}`,
  ].filter((x) => x !== null);
  return (
    'own process, paced like Claude (dev/scripted-model/pacing.ts: Sonnet 1.8 s to first token and 63 tokens/s, ' +
    `Opus 2.67 s and 45 tokens/s, each call's usual output length)${set.length ? `, with ${set.join(', ')}` : ''}; ${chunk}`
  );
}

/** Each phase's figures and verdict, one row a phase. */
function phasesTable(phases: readonly PhaseNumbers[]): string {
  const verdict = (n: PhaseNumbers) => `${n.met ? '✓' : '✗'}${n.target ? ` (${n.target})` : ''}`;
  const rows = phases.map((n) => [
    describeLoad(n),
    `${n.completed}/${n.failed}/${n.lost}`,
    `${n.steadyTurnsPerSecond.toFixed(2)} (${n.overallTurnsPerSecond.toFixed(2)})`,
    p(n.wall),
    p(n.model),
    p(n.overhead),
    p(n.delivery),
    `${cores(n.cpu.machineCores)} (${cores(n.cpu.otherCores)})`,
    `${((1000 * n.cpu.coresByRole.reduce((sum, r) => sum + r.seconds, 0)) / Math.max(1, n.turns)).toFixed(0)} ms`,
    verdict(n),
  ]);
  return table(
    [
      'Load',
      'Completed/failed/lost',
      'Turns/s steady (overall)',
      'Turn wall',
      'Model time per turn',
      'Overhead (wall − model)',
      'Event delivery (commit → subscriber)',
      'Machine cores busy (not ours)',
      'Our CPU per turn',
      phases.some((n) => n.inFlightTarget !== null)
        ? `Target: every turn and event, delivery and POST → 201 p99 ≤ ${IN_FLIGHT_TARGET.deliveryP99Ms} ms`
        : 'Target (by kind of turn)',
    ],
    rows,
  );
}

/** The run's record: a file of its own under docs/benchmarks/load/. */
export function renderRunRecord(info: RunInfo, phases: PhaseNumbers[]): string {
  const lines = [
    `# Load (npm run load): run of ${info.date}`,
    '',
    'Written by `npm run load` ([what each column is](../../benchmarks.md#load-npm-run-load)).',
    '',
    `\`${info.command}\`${info.note ? ` — ${info.note}` : ''}`,
    '',
    table(
      ['Setting', ''],
      [
        ['Machine', `${info.cpu}, ${info.cores} cores; Node ${info.node}`],
        [
          'Postgres',
          `${info.postgres}, local, fsync off, track_commit_timestamp ${info.commitTimestamps ? 'on' : 'off'}`,
        ],
        ['Temporal', info.temporal],
        ['Code', info.code],
        [
          'Service',
          `${info.apis} API process${info.apis === 1 ? '' : 'es'}, ` +
            `${info.workers} worker process${info.workers === 1 ? '' : 'es'}`,
        ],
        ['Scripted model', describeModelPace(info.pacing, info.chunkDelayMs)],
        [
          'Clients',
          `${info.subscribers} SSE subscribers per turn; ${info.warmup} warm-up turns per phase, not counted`,
        ],
        [
          'Machine load',
          `load average ${info.loadBefore.map((l) => l.toFixed(2)).join(', ')} before, ` +
            `${info.loadAfter.map((l) => l.toFixed(2)).join(', ')} after (1, 5, 15 min)`,
        ],
      ],
    ),
    '',
    phasesTable(phases),
    '',
  ];
  for (const n of phases) {
    const details: string[] = [];
    if (n.overheadByKind.length > 1) {
      details.push(
        'overhead by kind: ' +
          n.overheadByKind.map((k) => `${k.kind} (n=${k.n}) ${p(k.overhead)}; wall ${p(k.wall)}`).join('; '),
      );
    }
    details.push(
      `${n.turns} turns, ${n.subscribers} subscriber streams; ${n.subscribersWithoutTerminal} streams without a ` +
        `terminal event, ${n.reconnects} resumed after a drop, ${n.outOfOrder} events out of order, ` +
        `${n.eventsMissing} events of the log missing and ${n.eventsDuplicated} received twice at streams ` +
        `that ended; ` +
        `${n.offPath} turns off their kind's path; ${n.rejected429} POSTs answered 429` +
        (n.lostReasons.length ? `; lost: ${n.lostReasons.join(' | ')}` : ''),
    );
    details.push(
      `POST → 201 ${p(n.post)}; created → started (queued, server clocks) ${p(n.queued)}; the result's ` +
        `duration_ms (started → completed) ${p(n.duration)}; first subscriber's terminal event ${p(n.wallFirst)}` +
        (n.startDelay ? `; turns started late against the schedule by ${p(n.startDelay, ['p50', 'p99', 'max'])}` : ''),
    );
    details.push(
      `model: ${n.modelCallsPerTurn.toFixed(1)} calls per turn` +
        (n.untimedModelCalls ? `, ${n.untimedModelCalls} calls without a model timing` : '') +
        `; events: ${n.eventsPerTurn.toFixed(1)} per turn, delivery n=${n.delivery?.n ?? 0}, max ` +
        `${n.delivery ? formatMs(n.delivery.max) : '—'}; ${n.replayedAtSubscribe} event×subscriber pairs were ` +
        `committed before the stream was open (replayed; subscribe took ${p(n.subscribeMs)})`,
    );
    if (n.histories) {
      details.push(
        `Temporal, from ${n.histories.n} sampled histories (per turn, server timestamps): tasks waiting for a ` +
          `worker ${p(n.histories.dispatch)}; workflow tasks running ${p(n.histories.workflowTask)}; ` +
          `activities executing ${p(n.histories.activity)}`,
      );
    }
    const m = n.memory;
    const kbPerTurn = (kb: number | null) => (kb === null ? '—' : `${kb.toFixed(0)} kB`);
    details.push(
      `in flight: at most ${m.peakInFlight} turns at once (sampled each second); resident memory from the ` +
        `phase's start to that moment: workers ${m.workersStartMb.toFixed(0)} → ${m.workersAtPeakMb.toFixed(0)} MB ` +
        `(${kbPerTurn(m.workerKbPerTurn)} per turn in flight; at most ${m.workersMaxMb.toFixed(0)} MB in the ` +
        `phase), API ${m.apisStartMb.toFixed(0)} → ` +
        `${m.apisAtPeakMb.toFixed(0)} MB (${kbPerTurn(m.apiKbPerTurn)} per turn, with its ${n.subscribers / Math.max(1, n.turns)} streams)`,
    );
    const perTurn = (seconds: number) => `${((1000 * seconds) / Math.max(1, n.turns)).toFixed(0)} ms`;
    details.push(
      `CPU over ${n.cpu.wallSeconds.toFixed(0)} s, cores used on average (CPU time per turn): ` +
        n.cpu.coresByRole.map((r) => `${r.role} ${cores(r.cores)} (${perTurn(r.seconds)})`).join(', ') +
        `; the rest of the machine ${cores(n.cpu.otherCores)} (of ${n.cpu.cores}); load generator event-loop ` +
        `delay p99 ${formatMs(n.loopDelay.p99)}, max ${formatMs(n.loopDelay.max)}`,
    );
    lines.push(`- **${describeLoad(n)}**: ${details.join('. ')}.`);
  }
  lines.push(
    `- Peak resident memory (VmHWM, whole run): ${info.memory
      .map((m) => `${m.role} ${m.peakMb.toFixed(0)} MB (${m.endMb.toFixed(0)} MB at the end)`)
      .join(', ')}: the Node processes; a worker's Python (the gates process, sandbox runs) is not included. ` +
      'MB = 10⁶ bytes.',
    `- Event delivery is timed from ${
      info.commitTimestamps
        ? "the append's commit (`pg_xact_commit_timestamp`)"
        : "the append transaction's start (`created_at`: commit timestamps are off, so this over-counts by the append itself)"
    } to the subscriber parsing it; the two clocks are this machine's, and the load generator's ran ` +
      `${formatMs(Math.abs(info.clockDriftMs))} apart from the system clock over the run.`,
    `- CPU by process is read from ${
      info.cpuAccounting === 'cgroup'
        ? 'a cpuacct cgroup per role (sandbox runs included in the workers)'
        : '/proc (the sandbox runs are not charged to the workers but to the rest of the machine)'
    }.`,
    `- Idle, before the first phase (${info.idle.wallSeconds.toFixed(0)} s, no turns): ` +
      `${cores(info.idle.coresByRole.reduce((sum, r) => sum + r.cores, 0))} cores ours (` +
      info.idle.coresByRole.map((r) => `${r.role} ${cores(r.cores)}`).join(', ') +
      `), ${cores(info.idle.otherCores)} the rest of the machine.`,
    `- The whole run took ${info.durationSeconds.toFixed(0)} s.`,
    '',
  );
  return lines.join('\n');
}

/**
 * The generated part of docs/benchmarks.md's section: the latest run's table and the links to every record
 * (`records`: file names under docs/benchmarks/load/, newest first, the latest run's included).
 */
export function renderDocSection(info: RunInfo, phases: readonly PhaseNumbers[], records: readonly string[]): string {
  return [
    `Latest run: ${info.date}, \`${info.command}\` (${recordLink('load', records[0])}: its settings and each phase's notes).`,
    '',
    phasesTable(phases),
    '',
    `Every run's record: ${records.map((file) => recordLink('load', file)).join(', ')}.`,
  ].join('\n');
}
