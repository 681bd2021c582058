/**
 * `npm run bench:pacing`: how long a user waits for the answer under a real model's pacing. Each of six
 * shapes of turn (./pacing-targets.ts: fallback, data lookup, knowledge, data + domain, coaching,
 * Investigator) is asked over the HTTP API with the scripted model paced like Claude
 * (dev/scripted-model/pacing.ts), one turn at a time: it measures latency, not load. Reported per shape,
 * as medians over the runs: the first word of the answer and the turn's end as the client saw them, the
 * model calls from the `llm_calls` ledger (how many, their durations back to back, the cost) and the
 * critical path, against the targets and the contract's bands. A bench, not a test: a target missed is
 * reported, never an exit code; only a run that could not be made fails.
 *
 * The run's record goes to docs/benchmarks/pacing/<time>.md and its verdicts to docs/benchmarks.md's
 * section "Answer latency under realistic pacing". About a minute per turn: 6 shapes × 3 runs is 15–20 min.
 *
 *   npm run bench:pacing -- [options]
 *     --runs N             turns of each shape, taken in rounds of one of each   (default 3)
 *     --warmup W           untimed data + domain turns first, so the worker's gates process and
 *                          sandbox are started as a serving worker's are          (default 1)
 *     --only IDS           only these shapes (fallback, data_lookup, knowledge, data_domain,
 *                          coaching, investigator; commas between): the record is printed,
 *                          and nothing is written
 *     --turn-timeout-s T   a turn without its terminal event after T s is lost   (default 300)
 *     --note TEXT          a note for the record, e.g. what else ran on the machine
 *     --no-write           print the record only
 *     --help
 */
import { parseArgs } from 'node:util';
import { codeVersion, commandLine, optionsOrUsage, usageFromHeader } from './command-line';
import { newAgent } from './http-client';
import { startPacedStack, type PacedStack } from './paced-stack';
import { readLedgerCalls } from './pacing-ledger';
import { renderDocSection, renderRunRecord, type PacingRunInfo } from './pacing-render';
import { summarisePacing, type TurnMeasurement } from './pacing-summary';
import { PACING_SHAPES, type PacingShape } from './pacing-targets';
import { followTurn } from './pacing-turn';
import { listRunRecords, writeDocSection, writeRunRecord } from './pacing-write';
import { machineInfo } from './report';
import { nowMs } from './stats';

const USAGE = usageFromHeader(__filename, 'bench:pacing');
/** The shape of the warm-up turns: it starts what the others use too (the sandbox, the gates, the Domain Expert's tools). */
const WARMUP_SHAPE = 'data_domain';

const say = (message: string) => console.log(`[bench:pacing] ${message}`);

interface Options {
  runs: number;
  warmup: number;
  shapes: readonly PacingShape[];
  /** False with --only or --no-write: the docs hold whole runs only. */
  write: boolean;
  turnTimeoutMs: number;
  note: string | null;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string' },
      warmup: { type: 'string' },
      only: { type: 'string' },
      'turn-timeout-s': { type: 'string' },
      note: { type: 'string' },
      'no-write': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return null;
  const int = (name: string, raw: string | undefined, fallback: number, min: number) => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, not ${raw}`);
    return n;
  };
  let shapes = PACING_SHAPES;
  if (values.only !== undefined) {
    const ids = values.only.split(',').map((id) => id.trim());
    const unknown = ids.filter((id) => !PACING_SHAPES.some((shape) => shape.id === id));
    if (unknown.length || ids.length === 0) {
      throw new Error(`--only takes ${PACING_SHAPES.map((shape) => shape.id).join(', ')}, not ${values.only}`);
    }
    shapes = PACING_SHAPES.filter((shape) => ids.includes(shape.id));
  }
  return {
    runs: int('runs', values.runs, 3, 1),
    warmup: int('warmup', values.warmup, 1, 0),
    shapes,
    write: values.only === undefined && !values['no-write'],
    turnTimeoutMs: int('turn-timeout-s', values['turn-timeout-s'], 300, 1) * 1000,
    note: values.note ?? null,
  };
}

async function measure(stack: PacedStack, opts: Options): Promise<TurnMeasurement[]> {
  const agent = newAgent();
  const ask = async (shape: PacingShape) =>
    followTurn({
      apiUrl: stack.apiUrl,
      apiKey: await stack.newDemoUser(),
      agent,
      question: shape.question,
      timeoutMs: opts.turnTimeoutMs,
    });
  try {
    const warmupShape = PACING_SHAPES.find((shape) => shape.id === WARMUP_SHAPE)!;
    for (let i = 1; i <= opts.warmup; i++) {
      const turn = await ask(warmupShape);
      say(`warm-up ${i}/${opts.warmup}: ${turn.outcome}`);
    }
    const measurements: TurnMeasurement[] = [];
    // In rounds of one turn of each shape, so that a change in the machine's load spreads over every shape.
    for (let run = 1; run <= opts.runs; run++) {
      for (const shape of opts.shapes) {
        const client = await ask(shape);
        const calls = client.turnId ? await readLedgerCalls(stack.pool, client.turnId) : [];
        measurements.push({ shape: shape.id, run, client, calls });
        const time = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`);
        say(
          `run ${run}/${opts.runs}, ${shape.label}: ${client.outcome}${client.reason ? ` (${client.reason})` : ''}, ` +
            `first word ${time(client.firstWordMs)}, ended ${time(client.endedMs)}, ${calls.length} model calls`,
        );
      }
    }
    return measurements;
  } finally {
    agent.destroy();
  }
}

async function run(opts: Options): Promise<number> {
  const startedAt = nowMs();
  const stack = await startPacedStack(say);
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      void stack.stop().then(() => process.exit(130));
    });
  }
  let measurements: TurnMeasurement[];
  try {
    measurements = await measure(stack, opts);
  } finally {
    say('stopping');
    if (!interrupted) await stack.stop();
  }
  const summaries = summarisePacing(measurements, opts.shapes);
  const machine = machineInfo(stack.postgresVersion, stack.temporalVersion);
  const info: PacingRunInfo = {
    date: machine.date,
    machine,
    pacing: stack.pacing,
    runs: opts.runs,
    warmup: opts.warmup,
    command: commandLine('bench:pacing', process.argv.slice(2)),
    code: codeVersion(),
    durationSeconds: (nowMs() - startedAt) / 1000,
    note: opts.note,
  };
  const record = renderRunRecord(info, summaries);
  console.log(`\n${record}`);
  if (opts.write) {
    say(`record written to ${writeRunRecord(info.date, record)}`);
    say(`verdicts written to ${writeDocSection(renderDocSection(info, summaries, PACING_SHAPES, listRunRecords()))}`);
  }
  return 0;
}

async function main(): Promise<void> {
  const opts = optionsOrUsage(parseOptions, USAGE);
  if (!opts) return;
  // Exit explicitly: a stray handle (a pool's idle timer, a keep-alive socket) must not keep the run alive.
  process.exit(await run(opts));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
