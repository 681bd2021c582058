/**
 * The generated-code sandbox: correct answers on real-looking data, and every program in
 * test/sandbox-hostile/ contained, reported as the failure its header names, with the worker healthy
 * afterwards. Needs bubblewrap (`apt-get install bubblewrap`); without it these tests fail, they do
 * not skip.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import type { DailyRow, DailyMetric } from '../../contracts/health-records';
import {
  createSandbox,
  defaultSandboxDir,
  SandboxUnavailableError,
  type SandboxData,
  type SandboxResult,
  sweepStaleRunDirs,
} from '../../platform/sandbox';
import { bwrapArgs, pythonLayout, sandboxUid } from '../../platform/sandbox/bwrap';
import { findBwrap } from '../../platform/sandbox/find-bwrap';
import { runConfined } from '../../platform/sandbox/process';
import { tryLock } from '../../platform/sandbox/run-dir';
import { sandboxPids, survivors } from '../support/sandbox-processes';

const REPO = path.resolve(__dirname, '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const HOSTILE_DIR = path.join(__dirname, '..', 'sandbox-hostile');

const health = generateHealthData({ seed: 7, days: 120, endDate: new Date('2026-11-22T12:00:00Z') });
const DATA: SandboxData = { summary: health.daily, activities: health.workouts, profile: health.profile };

const present = (rows: DailyRow[], metric: DailyMetric) =>
  rows.map((row) => row[metric]).filter((value): value is number => value !== null);
const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
const sampleSd = (xs: number[]) => Math.sqrt(xs.reduce((sum, x) => sum + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
function median(xs: number[]) {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
function pearson(pairs: Array<[number, number]>) {
  const [ma, mb] = [mean(pairs.map((p) => p[0])), mean(pairs.map((p) => p[1]))];
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (const [a, b] of pairs) {
    ab += (a - ma) * (b - mb);
    aa += (a - ma) ** 2;
    bb += (b - mb) ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}
const DAY_MS = 86_400_000;
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;

const MEAN_STEPS = mean(present(DATA.summary, 'steps'));
const BENIGN = "return summary_df['steps'].mean()";

function expectOk(result: SandboxResult): unknown {
  if (result.status !== 'ok') throw new Error(`expected a result, got ${JSON.stringify(result)}`);
  return result.result;
}

describe('sandbox: analysis on the user data', () => {
  const sandbox = createSandbox({ python: PYTHON });

  test('mean, median and SD of a metric over the last 30 days', async () => {
    const code = [
      "recent = summary_df[summary_df['date'] > summary_df['date'].max() - pd.Timedelta(days=30)]['steps']",
      "return {'mean': recent.mean(), 'median': recent.median(), 'sd': recent.std(), 'n': int(recent.count())}",
    ].join('\n');
    const last = dayNumber(DATA.summary.at(-1)!.date);
    const window = present(
      DATA.summary.filter((row) => dayNumber(row.date) > last - 30),
      'steps',
    );
    const result = expectOk(await sandbox.run({ code, data: DATA })) as Record<string, number>;
    expect(result.n).toBe(window.length);
    expect(result.mean).toBeCloseTo(mean(window), 9);
    expect(result.median).toBeCloseTo(median(window), 9);
    expect(result.sd).toBeCloseTo(sampleSd(window), 9);
  });

  test('a correlation over the days where both metrics are present', async () => {
    const code = "return summary_df['sleep_minutes'].corr(summary_df['heart_rate_variability'])";
    const pairs = DATA.summary
      .filter((row) => row.sleep_minutes !== null && row.heart_rate_variability !== null)
      .map((row): [number, number] => [row.sleep_minutes!, row.heart_rate_variability!]);
    expect(expectOk(await sandbox.run({ code, data: DATA }))).toBeCloseTo(pearson(pairs), 9);
  });

  test('a day-of-week groupby comes back keyed by day name', async () => {
    const code = "return summary_df.groupby(summary_df['date'].dt.day_name())['steps'].mean()";
    const names = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const expected = Object.fromEntries(
      names.map((name, weekday) => [
        name,
        mean(
          present(
            DATA.summary.filter((row) => new Date(`${row.date}T00:00:00Z`).getUTCDay() === weekday),
            'steps',
          ),
        ),
      ]),
    );
    const result = expectOk(await sandbox.run({ code, data: DATA })) as Record<string, number>;
    expect(Object.keys(result).sort()).toEqual([...names].sort());
    for (const name of names) expect(result[name]).toBeCloseTo(expected[name], 9);
  });

  test('activities, profile and an empty population frame are handed in; prints come back as stdout', async () => {
    const code = [
      "print('rows', len(summary_df))",
      'return {',
      "    'workouts': len(activities_df),",
      "    'minutes': activities_df['duration_minutes'].sum(),",
      "    'profile': profile_df.iloc[0].to_dict(),",
      "    'population': list(population_df.columns),",
      "    'population_rows': len(population_df),",
      '}',
    ].join('\n');
    const result = await sandbox.run({ code, data: DATA });
    expect(result).toMatchObject({
      status: 'ok',
      stdout: `rows ${DATA.summary.length}\n`,
      result: {
        workouts: DATA.activities.length,
        profile: DATA.profile,
        population: ['metric', 'sex', 'age_band', 'mean', 'sd', 'n'],
        population_rows: 0,
      },
    });
    const minutes = DATA.activities.reduce((sum, workout) => sum + workout.duration_minutes, 0);
    expect((expectOk(result) as { minutes: number }).minutes).toBeCloseTo(minutes, 6);
  });

  test('composite features: hrv_rhr_ratio, cardio_fitness_index and the 30-day rolling statistics', async () => {
    // 41 calendar days with one missing (so windows are by date, not by row) and one missing RHR.
    const summary: DailyRow[] = [];
    for (let i = 0; i < 41; i++) {
      const date = new Date(Date.UTC(2024, 2, 1) + i * DAY_MS).toISOString().slice(0, 10);
      if (date === '2024-03-15') continue;
      summary.push({
        date,
        steps: 6000 + 700 * (i % 9),
        sleep_minutes: 380 + ((i * 37) % 60),
        deep_sleep_minutes: 60,
        rem_sleep_minutes: 90,
        light_sleep_minutes: 200,
        awake_minutes: 30,
        resting_heart_rate: date === '2024-03-20' ? null : 56 + (i % 5),
        heart_rate_variability: 45 + (i % 7),
        stress_management_score: 80,
        active_zone_minutes: 10 + 5 * (i % 4),
        sleep_score: 80,
      });
    }
    const within = (row: DailyRow, days: number) =>
      summary.filter((other) => dayNumber(other.date) > dayNumber(row.date) - days && other.date <= row.date);
    const windowMean = (row: DailyRow, metric: DailyMetric, days: number, minimum: number) => {
      const values = present(within(row, days), metric);
      return values.length >= minimum ? mean(values) : null;
    };
    const clip = (x: number) => Math.min(1, Math.max(0, x));
    const expected = summary.map((row) => {
      const steps7 = windowMean(row, 'steps', 7, 4);
      const azm7 = windowMean(row, 'active_zone_minutes', 7, 4);
      const rhr = row.resting_heart_rate;
      const sleep30 = present(within(row, 30), 'sleep_minutes');
      const enough = sleep30.length >= 7;
      return {
        date: row.date,
        hrv_rhr_ratio: rhr === null ? null : row.heart_rate_variability! / rhr,
        cardio_fitness_index:
          rhr === null || steps7 === null || azm7 === null
            ? null
            : 100 * (0.5 * clip((90 - rhr) / 45) + 0.25 * clip(steps7 / 10_000) + 0.25 * clip(azm7 / (150 / 7))),
        sleep_minutes_mean_30d: enough ? mean(sleep30) : null,
        sleep_minutes_sd_30d: enough ? sampleSd(sleep30) : null,
        sleep_minutes_cv_30d: enough ? sampleSd(sleep30) / mean(sleep30) : null,
      };
    });
    const columns = Object.keys(expected[0]);
    const code = `return {'columns': list(summary_df.columns), 'rows': summary_df[${JSON.stringify(columns)}]}`;
    const result = expectOk(await sandbox.run({ code, data: { ...DATA, summary } })) as {
      columns: string[];
      rows: Array<Record<string, string | number | null>>;
    };
    const rolling = ['mean', 'sd', 'cv'].flatMap((stat) =>
      Object.keys(summary[0])
        .filter((c) => c !== 'date')
        .map((metric) => `${metric}_${stat}_30d`),
    );
    expect(result.columns).toEqual(expect.arrayContaining(['hrv_rhr_ratio', 'cardio_fitness_index', ...rolling]));
    expect(result.rows).toHaveLength(expected.length);
    result.rows.forEach((row, i) => {
      for (const column of columns) {
        const want = expected[i][column as keyof (typeof expected)[number]];
        if (typeof want === 'number') expect(row[column]).toBeCloseTo(want, 9);
        else expect(row[column]).toBe(want);
      }
    });
    // The edges of the definitions are exercised: missing early windows, the missing RHR day.
    expect(expected.filter((row) => row.sleep_minutes_mean_30d === null)).toHaveLength(6);
    expect(expected.filter((row) => row.cardio_fitness_index === null).length).toBeGreaterThanOrEqual(4);
  });

  test('preflight repairs a block opener followed by an unindented body, and the repaired code runs', async () => {
    const code = ['total = 0', "for steps in summary_df['steps'].dropna():", 'total += steps', 'return total'].join(
      '\n',
    );
    const checked = await sandbox.preflight(code);
    expect(checked).toEqual({
      ok: true,
      autoFixed: true,
      code: ['total = 0', "for steps in summary_df['steps'].dropna():", '    total += steps', 'return total'].join(
        '\n',
      ),
    });
    if (!checked.ok) return;
    const total = present(DATA.summary, 'steps').reduce((sum, x) => sum + x, 0);
    expect(expectOk(await sandbox.run({ code: checked.code, data: DATA }))).toBeCloseTo(total, 6);
  });

  test('preflight passes good code through untouched and reports a syntax error at its line', async () => {
    expect(await sandbox.preflight(BENIGN)).toEqual({ ok: true, code: BENIGN, autoFixed: false });
    const broken = ["m = summary_df['steps'].mean()", 'if m > 5000', '    return m', 'return 0'].join('\n');
    expect(await sandbox.preflight(broken)).toEqual({
      ok: false,
      error: { line: 2, col: 12, message: "expected ':'" },
    });
  });

  test('an exception inside analysis is reported at the line of the generated code', async () => {
    const code = ["steps = summary_df['steps']", "missing = summary_df['no_such_column']", 'return steps.mean()'].join(
      '\n',
    );
    const result = await sandbox.run({ code, data: DATA });
    expect(result).toMatchObject({
      status: 'error',
      kind: 'exception',
      line: 2,
      message: "KeyError: 'no_such_column'",
    });
    if (result.status !== 'error') return;
    expect(result.traceback).toContain("line 2, in analysis\n    missing = summary_df['no_such_column']");
    expect(result.traceback).not.toMatch(/runner\.py|pandas\/|\/sandbox\//);
  });

  test('code that defines analysis(...) itself is run as it is', async () => {
    const code = 'def analysis(summary_df, activities_df, profile_df, population_df):\n    return len(summary_df)';
    expect(expectOk(await sandbox.run({ code, data: DATA }))).toBe(DATA.summary.length);
  });
});

describe('sandbox: hostile programs', () => {
  // 3 CPU seconds: pandas' import and the frames take about 1 s of it, and on a loaded machine the page
  // faults of alloc_gradual.py can push a 2 s budget over before the memory limit is reached. 10 s of
  // wall clock: only infinite_loop.py should meet it, and a busy CI machine once made alloc_gradual.py's
  // gigabyte of page faults outlast 6 s.
  const LIMITS = { wallMs: 10_000, cpuSeconds: 3, memoryMb: 1024, maxOutputBytes: 256 * 1024 };
  // Run directories in a directory of this suite's own: other processes on the machine make theirs in /tmp.
  const runDirParent = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-hostile-runs-'));
  const sandbox = createSandbox({ python: PYTHON, limits: LIMITS, runDirParent });
  const secrets = { ANTHROPIC_API_KEY: 'sk-ant-sandbox-canary-7f3a', DATABASE_URL: 'postgres://canary:pw-91c2@db/amy' };
  const saved: Record<string, string | undefined> = {};
  const markerPrefix = `amy-sandbox-hostile-${process.pid}-`;
  /** Where a program's attempted writes would land on the host, were they not contained. */
  const hostPaths = (name: string) => [path.join('/tmp', markerPrefix + name), path.join(REPO, markerPrefix + name)];
  /**
   * Programs whose verdict is a resource limit against the wall clock (CPU time, or memory touched page
   * by page): run alone, so a neighbour cannot skew it.
   */
  const RUN_ALONE = new Set(['cpu_spin.py', 'cpu_spin_ignoring_sigxcpu.py', 'alloc_gradual.py']);
  /** A program's test may wait for the whole queue ahead of it (about 30 s here) before its own run. */
  const QUEUED_TEST_TIMEOUT_MS = 120_000;

  /** Checks for the programs that succeed harmlessly inside; each must prove nothing outside changed. */
  const harmlessSuccess: Record<string, (result: unknown) => void> = {
    'env_secrets.py': (result) => {
      const text = JSON.stringify(result);
      for (const [name, value] of Object.entries(secrets)) {
        expect(text).not.toContain(value);
        expect(text).not.toContain(name);
      }
    },
    'write_tmp.py': (result) => expect(result).toBe('written'),
  };

  const programs = fs
    .readdirSync(HOSTILE_DIR)
    .filter((name) => name.endsWith('.py'))
    .sort()
    .map((name) => {
      const source = fs.readFileSync(path.join(HOSTILE_DIR, name), 'utf8');
      const expected = /^# Expect: (\w+)$/m.exec(source)?.[1];
      if (!expected) throw new Error(`${name} has no "# Expect:" line`);
      const code = source
        .replaceAll('__REPO_DIR__', REPO)
        .replaceAll('__REPO_FILE_NAME__', markerPrefix + name)
        .replaceAll('__HOST_TMP_NAME__', markerPrefix + name);
      return { name, expected, code };
    });

  interface Outcome {
    result: SandboxResult;
    /** A benign program run right after the hostile one. */
    after: SandboxResult;
    /** Sandbox-uid processes that appeared during the run and outlived it (CPU-bound programs only). */
    leftover?: string[];
  }
  const outcomes = new Map<string, Promise<Outcome>>();

  async function attack(code: string, alone: boolean): Promise<Outcome> {
    const before = new Set(sandboxPids());
    const result = await sandbox.run({ code, data: DATA });
    const left = alone ? await survivors(before) : undefined;
    return { result, after: await sandbox.run({ code: BENIGN, data: DATA }), leftover: left };
  }

  beforeAll(() => {
    for (const [name, value] of Object.entries(secrets)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    // The limit-bound programs alone first, then two lanes for the CI machine's two cores. Each test
    // awaits its own program; a failure is reported there, not as an unhandled rejection.
    let alone: Promise<unknown> = Promise.resolve();
    for (const program of programs.filter((p) => RUN_ALONE.has(p.name))) {
      const outcome = alone.then(() => attack(program.code, true));
      alone = outcome.catch(() => undefined);
      outcomes.set(program.name, outcome);
    }
    const lanes = [alone, alone];
    programs
      .filter((p) => !RUN_ALONE.has(p.name))
      .forEach((program, i) => {
        const outcome = lanes[i % 2].then(() => attack(program.code, false));
        lanes[i % 2] = outcome.catch(() => undefined);
        outcomes.set(program.name, outcome);
      });
  });
  afterAll(() => {
    fs.rmSync(runDirParent, { recursive: true, force: true });
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  test('the suite covers every attack the contract names', () => {
    const names = programs.map((p) => p.name);
    for (const required of [
      'net_connect_localhost.py',
      'net_connect_outside.py',
      'read_shadow.py',
      'read_repo_file.py',
      'write_tmp.py',
      'write_repo.py',
      'subprocess_run.py',
      'os_system.py',
      'fork_bomb.py',
      'infinite_loop.py',
      'cpu_spin.py',
      'alloc_10gb.py',
      'alloc_10gb_numpy.py',
      'subclasses_os_system.py',
      'ctypes_system.py',
      'env_secrets.py',
      'kill_parent.py',
      'stdout_flood.py',
    ]) {
      expect(names).toContain(required);
    }
    for (const program of programs.filter((p) => p.expected === 'ok')) {
      expect(Object.keys(harmlessSuccess)).toContain(program.name);
    }
  });

  /**
   * A checkout under /tmp (CI clones can live there) puts the repository's path inside the sandbox's
   * own scratch directory, where a missing file is an ordinary exception rather than a refusal. The
   * file is unreadable either way; only the label differs.
   */
  const expectedKind = (program: { name: string; expected: string }) =>
    program.name === 'read_repo_file.py' && REPO.startsWith('/tmp/') ? 'exception' : program.expected;

  test.each(programs.map((p) => [p.name, p] as const))(
    '%s is contained',
    async (name, program) => {
      const { result, after, leftover } = await outcomes.get(name)!;
      if (program.expected === 'ok') harmlessSuccess[name](expectOk(result));
      else expect(result).toMatchObject({ status: 'error', kind: expectedKind(program) });
      for (const hostPath of hostPaths(name)) expect(fs.existsSync(hostPath)).toBe(false);
      if (leftover) expect(leftover).toEqual([]);
      // The worker still runs code, correctly.
      expect(expectOk(after)).toBeCloseTo(MEAN_STEPS, 9);
    },
    QUEUED_TEST_TIMEOUT_MS,
  );

  test(
    'nothing of any run survives it: no sandbox processes, no run directories',
    async () => {
      await Promise.allSettled(outcomes.values());
      expect(await survivors(new Set())).toEqual([]);
      expect(fs.readdirSync(runDirParent).filter((name) => !name.startsWith('uid-'))).toEqual([]);
    },
    QUEUED_TEST_TIMEOUT_MS,
  );
});

describe('sandbox: layers on their own', () => {
  // These run plain `python -c` under the same bwrap command line, without the runner's seccomp filter,
  // to show each layer holds by itself.
  const runnerDir = path.join(REPO, 'gates-py', 'sandbox');
  async function bare(script: string) {
    const python = await pythonLayout(PYTHON);
    const args = bwrapArgs({ python, runnerDir, scratchBytes: 1024 * 1024 }, [python.executable, '-c', script]);
    const exit = await runConfined(findBwrap()?.path ?? 'bwrap', args, { wallMs: 10_000, maxStdoutBytes: 64 * 1024 });
    expect(exit).toMatchObject({ code: 0, timedOut: false });
    return JSON.parse(exit.stdout) as Record<string, unknown>;
  }

  test('the network namespace is empty: no route out, and the host loopback is not reachable', async () => {
    let accepted = 0;
    const server = net.createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const result = await bare(
        [
          'import json, socket',
          'def attempt(address):',
          '    try:',
          '        socket.create_connection(address, timeout=2)',
          "        return 'connected'",
          '    except OSError as exc:',
          '        return exc.errno',
          'interfaces = [name for _, name in socket.if_nameindex()]',
          `print(json.dumps({"host": attempt(("127.0.0.1", ${port})), "outside": attempt(("1.1.1.1", 443)), "interfaces": interfaces}))`,
        ].join('\n'),
      );
      expect(result).toEqual({
        host: os.constants.errno.ECONNREFUSED,
        outside: os.constants.errno.ENETUNREACH,
        interfaces: ['lo'],
      });
      expect(accepted).toBe(0);
    } finally {
      server.close();
    }
  });

  test('RLIMIT_NPROC alone stops a fork bomb, and the forked processes die with the sandbox', async () => {
    const result = await bare(
      [
        'import json, os, sys, time',
        "sys.path.insert(0, '/sandbox')",
        'import confine',
        'confine.apply_rlimits(confine.Limits(cpu_seconds=5, memory_bytes=512 * 1024 * 1024))',
        'forks = 0',
        'try:',
        '    while True:',
        '        if os.fork() == 0:',
        '            time.sleep(60)',
        '            os._exit(0)',
        '        forks += 1',
        'except OSError as exc:',
        '    print(json.dumps({"forks": forks, "errno": exc.errno, "uid": os.getuid()}))',
      ].join('\n'),
    );
    expect(result).toMatchObject({ errno: os.constants.errno.EAGAIN, uid: sandboxUid(0) });
    expect(result.forks).toBeLessThan(32);
    expect(await survivors(new Set())).toEqual([]);
  });
});

describe('sandbox: unavailable', () => {
  test('without bubblewrap nothing runs, and the caller gets SandboxUnavailableError', async () => {
    const marker = path.join('/tmp', `amy-sandbox-unconfined-${process.pid}`);
    // A host with neither the system's bubblewrap nor the wheel's, as the lookup sees it (find-bwrap.ts).
    const sandbox = createSandbox({ python: PYTHON, bwrap: '/nonexistent/bwrap' });
    const code = `open(${JSON.stringify(marker)}, 'w').write('ran unconfined')\nreturn 1`;
    const run = sandbox.run({ code, data: DATA });
    await expect(run).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(run).rejects.toMatchObject({ name: 'SandboxUnavailableError', message: /bubblewrap/ });
    await expect(sandbox.preflight(code)).rejects.toBeInstanceOf(SandboxUnavailableError);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('AMY_BWRAP_PATH at a missing file: the same refusal, naming the setting and the fix, not the path', async () => {
    const sandbox = createSandbox({ python: PYTHON, bwrap: '/nonexistent/bwrap' });
    const run = sandbox.run({ code: BENIGN, data: DATA });
    await expect(run).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(run).rejects.toMatchObject({ message: /AMY_BWRAP_PATH.*apt-get install bubblewrap/ });
    expect(String(await run.catch((err: unknown) => err))).not.toContain('nonexistent');
  });
});

describe('the sandbox directory is private to the worker', () => {
  const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-sandbox-dirs-'));
  afterAll(() => fs.rmSync(ROOT, { recursive: true, force: true }));
  const FOREIGN_UID = 54_321;

  async function refusal(dir: string): Promise<Error> {
    const sandbox = createSandbox({ python: PYTHON, runDirParent: dir });
    const err: unknown = await sandbox.run({ code: BENIGN, data: DATA }).catch((e: unknown) => e);
    if (!(err instanceof SandboxUnavailableError)) throw new Error(`expected a refusal, got ${JSON.stringify(err)}`);
    // Named by its setting, never by its path (the message reaches the user's stream).
    expect(err.message).toMatch(/AMY_SANDBOX_DIR/);
    expect(err.message).not.toContain(ROOT);
    return err;
  }

  test('a missing directory is made, mode 0700, and the run works in it; by default one per user in the temporary directory', async () => {
    const dir = path.join(ROOT, 'missing', 'sandbox');
    const sandbox = createSandbox({ python: PYTHON, runDirParent: dir });
    expect(expectOk(await sandbox.run({ code: BENIGN, data: DATA }))).toBeCloseTo(MEAN_STEPS, 9);
    const stat = fs.lstatSync(dir);
    expect(stat.isDirectory()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o700);
    expect(stat.uid).toBe(process.getuid!());

    expect(path.dirname(defaultSandboxDir())).toBe(os.tmpdir());
    await createSandbox({ python: PYTHON }).run({ code: BENIGN, data: DATA });
    const byDefault = fs.lstatSync(defaultSandboxDir());
    expect({ mode: byDefault.mode & 0o777, uid: byDefault.uid }).toEqual({ mode: 0o700, uid: process.getuid!() });
  });

  test('refused, with nothing run in it: a directory open to others, a symbolic link, another user’s directory', async () => {
    const open = path.join(ROOT, 'open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o755);
    expect((await refusal(open)).message).toMatch(/open to other users \(mode 755/);

    const target = fs.mkdtempSync(path.join(ROOT, 'target-'));
    const link = path.join(ROOT, 'link');
    fs.symlinkSync(target, link);
    expect((await refusal(link)).message).toMatch(/symbolic link/);
    const dangling = path.join(ROOT, 'dangling');
    fs.symlinkSync(path.join(ROOT, 'nowhere'), dangling);
    expect((await refusal(dangling)).message).toMatch(/symbolic link/);
    expect(fs.existsSync(path.join(ROOT, 'nowhere'))).toBe(false);

    const foreign = fs.mkdtempSync(path.join(ROOT, 'foreign-'));
    fs.chownSync(foreign, FOREIGN_UID, FOREIGN_UID);
    expect((await refusal(foreign)).message).toMatch(/not owned by the worker's user/);

    for (const dir of [open, target, foreign]) expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('the sweeper refuses a parent that is not private, and removes nothing in it', async () => {
    const open = fs.mkdtempSync(path.join(ROOT, 'sweep-open-'));
    fs.chmodSync(open, 0o770);
    fs.mkdirSync(path.join(open, 'amy-sandbox-stale'));
    await expect(sweepStaleRunDirs(open)).rejects.toThrow(/open to other users/);
    expect(fs.existsSync(path.join(open, 'amy-sandbox-stale'))).toBe(true);
  });
});

describe('stale run directories: ownership is a lock, not a process id', () => {
  const PARENT = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-sweep-'));
  afterAll(() => fs.rmSync(PARENT, { recursive: true, force: true }));

  function makeRunDir(name: string): string {
    const dir = path.join(PARENT, name);
    fs.mkdirSync(path.join(dir, 'input'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'input', 'summary.json'), '[]');
    return dir;
  }

  test("a directory nobody holds is swept, even when its name carries a live process's pid (a reused pid)", async () => {
    const reusedPid = makeRunDir(`amy-sandbox-${process.pid}-abc123`);
    const unlocked = makeRunDir('amy-sandbox-Zx81qQ');
    const unrelated = makeRunDir('something-else');

    await sweepStaleRunDirs(PARENT);

    expect(fs.existsSync(reusedPid)).toBe(false);
    expect(fs.existsSync(unlocked)).toBe(false);
    expect(fs.existsSync(unrelated)).toBe(true);
    fs.rmSync(unrelated, { recursive: true });
  });

  test('only its own user’s real directories are swept: never another user’s, never through a symbolic link', async () => {
    const foreign = makeRunDir('amy-sandbox-foreign');
    fs.chownSync(foreign, 54_321, 54_321);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'amy-sweep-target-'));
    fs.writeFileSync(path.join(elsewhere, 'precious'), 'not the sweeper’s');
    const link = path.join(PARENT, 'amy-sandbox-link');
    fs.symlinkSync(elsewhere, link);
    const own = makeRunDir('amy-sandbox-own');
    try {
      await sweepStaleRunDirs(PARENT);
      expect(fs.existsSync(own)).toBe(false);
      expect(fs.existsSync(path.join(foreign, 'input', 'summary.json'))).toBe(true);
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
      expect(fs.readFileSync(path.join(elsewhere, 'precious'), 'utf8')).toBe('not the sweeper’s');
    } finally {
      fs.rmSync(foreign, { recursive: true, force: true });
      fs.rmSync(link);
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  test('a directory whose lock is held is kept, whatever pid its name carries (another pid namespace)', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const held = makeRunDir(`amy-sandbox-${dead}-def456`);
    const lock = await tryLock(held);
    expect(lock).not.toBeNull();
    try {
      await sweepStaleRunDirs(PARENT);
      expect(fs.existsSync(path.join(held, 'input', 'summary.json'))).toBe(true);
    } finally {
      await lock!.release();
    }
    await sweepStaleRunDirs(PARENT);
    expect(fs.existsSync(held)).toBe(false);
  });

  test("a live run's directory survives another sandbox's sweep; a killed worker's is swept", async () => {
    // A real worker-like process: a sandbox run that sleeps, in a process of its own we can SIGKILL.
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'test', 'support', 'sandbox-run-holder.ts'), PARENT],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const runDir = await new Promise<string>((resolve, reject) => {
        holder.stdout.setEncoding('utf8').on('data', (text: string) => {
          const match = /^running (.+)$/m.exec(text);
          if (match) resolve(match[1]!);
        });
        holder.once('exit', (code) => reject(new Error(`the run holder exited (${code})`)));
      });
      expect(path.dirname(runDir)).toBe(PARENT);

      // Another sandbox starting up sweeps the same parent: the live run is left alone.
      const other = createSandbox({ python: PYTHON, runDirParent: PARENT });
      expect(expectOk(await other.run({ code: BENIGN, data: DATA }))).toBeCloseTo(MEAN_STEPS, 9);
      await sweepStaleRunDirs(PARENT);
      expect(fs.existsSync(path.join(runDir, 'input', 'code.py'))).toBe(true);

      holder.kill('SIGKILL');
      // The lock goes with the killed process's pipe: the next sweep may just beat that, so sweep until gone.
      const deadline = Date.now() + 30_000;
      while (fs.existsSync(runDir) && Date.now() < deadline) {
        await sweepStaleRunDirs(PARENT);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(fs.existsSync(runDir)).toBe(false);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
