/**
 * (e) One run of generated analysis code in the sandbox as a worker runs it: warm (platform/sandbox/,
 * AMY_SANDBOX_WARM's default: as root a child of the fork server, which imported pandas once, that
 * confines itself as a cold run's process is confined; otherwise a pre-started one-shot process), held to
 * the 100 ms p50 target. Beside it the cold sandbox (AMY_SANDBOX_WARM=off: bubblewrap, setpriv,
 * rlimits, seccomp, one fresh interpreter per run) and the floor, the same interpreter with the same
 * flags and environment running the same body on the same data with no confinement at all, also
 * spawned fresh each time. Each run is timed from the call to its parsed result, writing its input
 * files included.
 *
 * Two more series say where the cold sandbox's time goes: its runner (gates-py/sandbox/runner.py)
 * started directly, without bwrap, and an interpreter that only imports pandas.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { generateHealthData } from '../synthetic-data/generate';
import { createSandbox, DEFAULT_SANDBOX_LIMITS, type SandboxData } from '../../platform/sandbox';
import { bwrapArgs } from '../../platform/sandbox/bwrap';
import { analysisCodeFor } from '../scripted-model/language/analysis-code';
import { nowMs, summarize, type Summary } from './stats';

export interface SandboxOverheadOptions {
  python: string;
  /** Days of daily summary handed to every run. */
  days: number;
  /** Timed runs of each series, after one untimed run of each. */
  runs: number;
}

interface BodyResult {
  /** The warm sandbox (the worker's default mode). */
  sandbox: Summary;
  /** The cold sandbox: a fresh interpreter per run. */
  cold: Summary;
  floor: Summary;
  /** sandbox p50 / floor p50. */
  ratio: number;
  /** sandbox p50 − floor p50. */
  overheadMs: number;
  /** sandbox min − floor min. */
  overheadOfMinimaMs: number;
}

export interface SandboxOverheadResult {
  days: number;
  /** How the warm series' runs started: `fork` or `pool` (see AMY_SANDBOX_WARM). */
  warm: string;
  /** The first sandbox run, which also proves the sandbox works here (one confined pandas import). */
  firstRunMs: number;
  trivial: BodyResult;
  realistic: BodyResult;
  /** The first cold run, its probe included. */
  firstColdRunMs: number;
  /** runner.py with the trivial body, started without bwrap. */
  runnerWithoutBwrap: Summary;
  /** `python -c "import pandas"`. */
  pandasImport: Summary;
}

const TRIVIAL_BODY = 'return {"n": int(len(summary_df))}';
const REALISTIC_BODY = analysisCodeFor({
  kind: 'description',
  statistic: 'mean',
  feature: 'resting_heart_rate',
  target: null,
  window: { days: 90 },
});

const SEED = 7;
const END_DATE = new Date('2026-11-22T12:00:00Z');
const RUNNER_DIR = path.resolve(__dirname, '..', '..', 'gates-py', 'sandbox');
/** The interpreter flags the sandbox starts its runner with. */
const PYTHON_FLAGS = ['-s', '-B'];

const execFileAsync = promisify(execFile);

/**
 * The environment the sandbox gives its interpreter, read off its bwrap command line: one BLAS thread
 * instead of one per core changes the cost of importing numpy, and that is configuration, not confinement.
 */
function sandboxEnvironment(python: string): Record<string, string> {
  const mounts = { python: { executable: python, prefixes: [] }, runnerDir: RUNNER_DIR, scratchBytes: 0 };
  const args = bwrapArgs(mounts, [python]);
  const env: Record<string, string> = {};
  for (let i = args.indexOf('--setenv'); i !== -1; i = args.indexOf('--setenv', i + 3)) env[args[i + 1]] = args[i + 2];
  if (Object.keys(env).length === 0) throw new Error('no --setenv in the sandbox command line to copy');
  return env;
}

/** The analysis as a plain script: summary_df built as the sandbox builds it, without the composite features. */
const floorScript = (body: string) =>
  [
    'import json',
    'import sys',
    '',
    'import pandas as pd',
    '',
    '',
    'def analysis(summary_df):',
    ...body.split('\n').map((line) => `    ${line}`),
    '',
    '',
    "with open(sys.argv[1], encoding='utf-8') as f:",
    '    summary_df = pd.DataFrame.from_records(json.load(f))',
    "summary_df['date'] = pd.to_datetime(summary_df['date'], format='%Y-%m-%d')",
    // The scripted model's code looks at the other tables' last days when the summary is empty: here, empty.
    "activities_df = labs_df = pd.DataFrame({'date': pd.to_datetime([])})",
    'print(json.dumps(analysis(summary_df)))',
  ].join('\n');

async function inTempDir<T>(files: Record<string, string>, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `amy-bench-floor-${process.pid}-`));
  try {
    for (const [name, content] of Object.entries(files)) await fs.writeFile(path.join(dir, name), content);
    return await use(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** The last line a script printed, as JSON. */
const lastJsonLine = (stdout: string): unknown => JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? 'null');

export async function measureSandboxOverhead(opts: SandboxOverheadOptions): Promise<SandboxOverheadResult> {
  const health = generateHealthData({ seed: SEED, days: opts.days, endDate: END_DATE });
  const data: SandboxData = { summary: health.daily, activities: health.workouts, profile: health.profile };
  const summaryJson = JSON.stringify(data.summary);
  const sandbox = createSandbox({ python: opts.python });
  const cold = createSandbox({ python: opts.python, warm: 'off' });
  const env = sandboxEnvironment(opts.python);
  const python = (args: string[]) => execFileAsync(opts.python, [...PYTHON_FLAGS, ...args], { env });

  const inSandbox = async (code: string, which = sandbox) => {
    const result = await which.run({ code, data });
    if (result.status !== 'ok') throw new Error(`the sandbox run failed (${result.kind}): ${result.message}`);
    return result.result;
  };
  const unconfined = (body: string) =>
    inTempDir({ 'analysis.py': floorScript(body), 'summary.json': summaryJson }, async (dir) => {
      const { stdout } = await python([path.join(dir, 'analysis.py'), path.join(dir, 'summary.json')]);
      return lastJsonLine(stdout);
    });
  const runnerWithoutBwrap = () =>
    inTempDir(
      {
        'code.py': TRIVIAL_BODY,
        'summary.json': summaryJson,
        'activities.json': JSON.stringify(data.activities),
        'profile.json': JSON.stringify(data.profile),
      },
      async (dir) => {
        const limits = DEFAULT_SANDBOX_LIMITS;
        const { stdout } = await python([
          path.join(RUNNER_DIR, 'runner.py'),
          'run',
          dir,
          `--cpu-seconds=${limits.cpuSeconds}`,
          `--memory-mb=${limits.memoryMb}`,
          `--max-output-bytes=${limits.maxOutputBytes}`,
        ]);
        const envelope = lastJsonLine(stdout) as { status?: string; result?: unknown };
        if (envelope.status !== 'ok') throw new Error(`runner.py without bwrap failed: ${stdout.slice(-500)}`);
        return envelope.result;
      },
    );
  const pandasImport = async () => {
    await python(['-c', 'import pandas']);
    return null;
  };

  const series = {
    sandboxTrivial: () => inSandbox(TRIVIAL_BODY),
    coldTrivial: () => inSandbox(TRIVIAL_BODY, cold),
    floorTrivial: () => unconfined(TRIVIAL_BODY),
    runnerWithoutBwrap,
    pandasImport,
    sandboxRealistic: () => inSandbox(REALISTIC_BODY),
    coldRealistic: () => inSandbox(REALISTIC_BODY, cold),
    floorRealistic: () => unconfined(REALISTIC_BODY),
  };
  type SeriesName = keyof typeof series;
  const names = Object.keys(series) as SeriesName[];

  // The first sandbox run probes the sandbox once; a missing bubblewrap throws SandboxUnavailableError here.
  const firstStarted = nowMs();
  await series.sandboxTrivial();
  const firstRunMs = nowMs() - firstStarted;
  const firstColdStarted = nowMs();
  await series.coldTrivial();
  const firstColdRunMs = nowMs() - firstColdStarted;

  // One untimed run of each, so each series starts with the interpreter's files in the page cache; the
  // answers are compared, so the floor is known to do the same work as the sandbox.
  const answers = {} as Record<SeriesName, unknown>;
  for (const name of names) answers[name] = await series[name]();
  for (const [confined, floors] of [
    ['sandboxTrivial', ['coldTrivial', 'floorTrivial', 'runnerWithoutBwrap']],
    ['sandboxRealistic', ['coldRealistic', 'floorRealistic']],
  ] as const) {
    for (const floor of floors) {
      if (!isDeepStrictEqual(answers[confined], answers[floor])) {
        throw new Error(
          `${floor} answered ${JSON.stringify(answers[floor])}, the sandbox ${JSON.stringify(answers[confined])}`,
        );
      }
    }
  }

  // Round robin: one run of each series in turn, so a slow patch of the machine lands on all alike.
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<SeriesName, number[]>;
  for (let run = 0; run < opts.runs; run++) {
    for (const name of names) {
      const started = nowMs();
      await series[name]();
      samples[name].push(nowMs() - started);
    }
  }

  await Promise.all([sandbox.close(), cold.close()]);
  const s = Object.fromEntries(names.map((name) => [name, summarize(samples[name])])) as Record<SeriesName, Summary>;
  const body = (sandboxMs: Summary, coldMs: Summary, floorMs: Summary): BodyResult => ({
    sandbox: sandboxMs,
    cold: coldMs,
    floor: floorMs,
    ratio: sandboxMs.p50 / floorMs.p50,
    overheadMs: sandboxMs.p50 - floorMs.p50,
    overheadOfMinimaMs: sandboxMs.min - floorMs.min,
  });
  return {
    days: opts.days,
    warm: sandbox.warm,
    firstRunMs,
    firstColdRunMs,
    trivial: body(s.sandboxTrivial, s.coldTrivial, s.floorTrivial),
    realistic: body(s.sandboxRealistic, s.coldRealistic, s.floorRealistic),
    runnerWithoutBwrap: s.runnerWithoutBwrap,
    pandasImport: s.pandasImport,
  };
}
