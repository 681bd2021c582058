/**
 * The TypeScript gates runner end to end against the real Python gates (gates-py, .venv).
 */
import {
  findingSeriesSchema,
  gatesOutcomeSchema,
  type Finding,
  type FindingKind,
  type FindingSeries,
  type GatesOutcome,
} from '../../contracts/findings';
import {
  createGatesRunner,
  defaultPythonPath,
  GatesRunnerError,
  type FindingSeriesSpec,
  type GatesRunner,
  type GatesRunnerFailure,
} from '../../platform/gates';
import { generateHealthData, INDEPENDENT_PAIR, PLANTED_EFFECTS } from '../../dev/synthetic-data/generate';

/** Deterministic standard normals (mulberry32 + Box-Muller), so every run sees the same data. */
function normals(seed: number, n: number): number[] {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297; // in (0, 1): the log below stays finite
  };
  return Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()));
}

const finding = (id: string, kind: FindingKind) => ({
  id,
  claim: `${kind} under test`,
  kind,
  feature: 'steps',
  target: kind === 'association' ? 'sleep_minutes' : null,
  numbers: {},
  n: 0,
  window: 'last 180 days',
});

/** A pair with population correlation `rho`: 0 gives two independent series. */
function associationSeries(id: string, n: number, rho: number, seed: number): FindingSeries {
  const x = normals(seed, n);
  const noise = normals(seed + 1, n);
  return {
    finding: finding(id, 'association'),
    feature_values: x,
    target_values: x.map((v, i) => rho * v + Math.sqrt(1 - rho * rho) * noise[i]!),
  };
}

/** Enough work (several findings at n = 3000) that the process is certainly still busy 50 ms later. */
const slowRequest = Array.from({ length: 8 }, (_, i) => associationSeries(`slow-${i}`, 3000, 0.3, 100 + i));

function expectGatesRunnerError(reason: GatesRunnerFailure) {
  return expect.objectContaining({ name: 'GatesRunnerError', reason });
}

describe('gates runner against the Python gates', () => {
  // One runner for the suite, as a worker has: Python start-up is paid once, except where a test
  // kills the process on purpose.
  let runner: GatesRunner;

  beforeAll(() => {
    runner = createGatesRunner({ python: defaultPythonPath() });
  });
  afterAll(() => runner.close());

  test('a planted association is validated, an independent noise pair rejected', async () => {
    const [planted, noise] = await runner.run([
      associationSeries('ds-001', 180, 0.6, 1),
      associationSeries('ds-002', 180, 0, 4),
    ]);

    expect(planted).toMatchObject({ finding_id: 'ds-001', verdict: 'validated', passes: 6, applicable: 6 });
    expect(planted!.gates.map((g) => [g.gate, g.verdict])).toEqual([
      ['sample_size', 'passed'],
      ['effect_vs_noise', 'skipped'],
      ['construct_validity', 'passed'],
      ['bootstrap', 'passed'],
      ['subgroup_consistency', 'passed'],
      ['method_triangulation', 'passed'],
      ['discriminative_power', 'passed'],
    ]);
    expect(planted!.gates[3]!.detail).toMatchObject({ applicable: true, iterations: 1000 });
    // Not every noise pair is rejected (gates-py/tests/test_evaluate.py measures how many are not);
    // this one shows no signal to either signal gate, which rejects it whatever the pass ratio.
    expect(noise).toMatchObject({ finding_id: 'ds-002', verdict: 'rejected', hard_rejection: null });
    expect(noise!.gates.filter((g) => g.verdict === 'failed').map((g) => g.gate)).toEqual(
      expect.arrayContaining(['bootstrap', 'discriminative_power']),
    );
  });

  test('concurrent runs each get their own outcomes, and the pool reuses its processes', async () => {
    const scalar: FindingSeries = {
      finding: finding('ds-rhr', 'scalar'),
      feature_values: [60, 61, 59, null, 62, 60, 58, 61, 60, 59, 63],
    };
    const tooShort = associationSeries('ds-short', 19, 0.9, 5);
    const [first, second] = await Promise.all([runner.run([scalar]), runner.run([tooShort])]);
    const pids = runner.pids;

    // A scalar with no statistic is a mean, a description: sample_size and bootstrap apply, effect_vs_noise does not.
    expect(first).toEqual([expect.objectContaining({ finding_id: 'ds-rhr', verdict: 'validated', applicable: 2 })]);
    expect(second![0]).toMatchObject({ finding_id: 'ds-short', verdict: 'rejected', hard_rejection: 'sample_size' });
    expect(second![0]!.gates).toHaveLength(1);
    await Promise.all([runner.run([scalar]), runner.run([scalar])]);
    expect(runner.pids.sort()).toEqual(pids.sort());
  });

  test('a process killed mid-flight fails its request and is replaced on the next run', async () => {
    const single = createGatesRunner({ python: defaultPythonPath(), processes: 1 });
    await single.run([associationSeries('warm-up', 40, 0.5, 7)]);
    const [killedPid] = single.pids;
    const inFlight = single.run(slowRequest);
    process.kill(killedPid!, 'SIGKILL');

    await expect(inFlight).rejects.toEqual(expectGatesRunnerError('process_exited'));
    const [outcome] = await single.run([associationSeries('after-restart', 180, 0.6, 1)]);
    expect(outcome!.verdict).toBe('validated');
    expect(single.pids).toHaveLength(1);
    expect(single.pids).not.toContain(killedPid);
    await single.close();
  });

  test('a request that outlives its timeout is rejected and its process replaced', async () => {
    const single = createGatesRunner({ python: defaultPythonPath(), processes: 1 });
    await single.run([associationSeries('warm-up', 40, 0.5, 7)]);
    const [stuckPid] = single.pids;

    const error = await single.run(slowRequest, { timeoutMs: 50 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(GatesRunnerError);
    expect(error).toEqual(expectGatesRunnerError('timeout'));
    expect(single.pids).toEqual([]);

    const [outcome] = await single.run([associationSeries('after-timeout', 180, 0.6, 1)]);
    expect(outcome!.verdict).toBe('validated');
    expect(single.pids).not.toContain(stuckPid);
    await single.close();
  });

  test('a series that breaks the contract is refused before it reaches Python', async () => {
    const mismatched = { ...associationSeries('ds-bad', 30, 0.5, 9), target_values: [1, 2, 3] };
    const fresh = createGatesRunner({ python: defaultPythonPath() });
    await expect(fresh.run([mismatched])).rejects.toEqual(expectGatesRunnerError('invalid_input'));
    expect(fresh.pids).toEqual([]); // no process was started for it
    await fresh.close();
  });

  test('an interpreter that cannot start fails the run with spawn_failed', async () => {
    const broken = createGatesRunner({ python: '/nonexistent/python' });
    await expect(broken.run([associationSeries('ds-001', 30, 0.5, 1)])).rejects.toEqual(
      expectGatesRunnerError('spawn_failed'),
    );
    await broken.close();
  });

  test('a closed runner refuses further runs', async () => {
    const closed = createGatesRunner({ python: defaultPythonPath() });
    await closed.close();
    await expect(closed.run([associationSeries('ds-001', 30, 0.5, 1)])).rejects.toEqual(
      expectGatesRunnerError('closed'),
    );
  });
});

describe("finding series built from a user's daily rows", () => {
  const health = generateHealthData({ seed: 7, days: 180, endDate: new Date('2026-11-01T00:00:00Z') });
  let runner: GatesRunner;

  beforeAll(() => {
    runner = createGatesRunner({ python: defaultPythonPath() });
  });
  afterAll(() => runner.close());

  const spec = (
    id: string,
    kind: FindingKind,
    feature: string,
    target: string | null,
    windowDays: number | null,
  ): FindingSeriesSpec => ({
    finding: { ...finding(id, kind), feature, target } satisfies Finding,
    windowDays,
  });

  test('every planted association is validated; the independent pair is not', async () => {
    const planted = PLANTED_EFFECTS.filter((effect) => effect.kind === 'association');
    const specs = [
      ...planted.map((effect) => spec(`planted-${effect.feature}`, 'association', effect.feature, effect.target, null)),
      spec('independent', 'association', INDEPENDENT_PAIR.feature, INDEPENDENT_PAIR.target, null),
    ];

    const built = await runner.buildSeries({ daily: health.daily }, specs);
    const outcomes = await runner.run(built.map((b) => b.series));

    for (const { series, missingColumns } of built) {
      expect(missingColumns).toEqual([]);
      expect(series.feature_values).toHaveLength(180);
      expect(series.target_values).toHaveLength(180);
    }
    const verdicts = outcomes.map((o) => [o.finding_id, o.verdict]);
    expect(verdicts.slice(0, -1)).toEqual(planted.map((effect) => [`planted-${effect.feature}`, 'validated']));
    expect(['rejected', 'conditional']).toContain(outcomes.at(-1)!.verdict);
  });

  test('the planted resting heart rate fall is validated as a trend, last 30 days against the 30 before', async () => {
    const [trend] = PLANTED_EFFECTS.filter((effect) => effect.kind === 'trend');
    const [built] = await runner.buildSeries({ daily: health.daily }, [
      spec('rhr-trend', 'trend', trend!.feature, null, null),
    ]);

    expect(built!.series.feature_values).toEqual(health.daily.slice(-60).map((row) => row[trend!.feature]));
    expect(built!.series.recent_start).toBe(30);
    const [outcome] = await runner.run([built!.series]);
    expect(outcome).toMatchObject({ finding_id: 'rhr-trend', verdict: 'validated' });
  });

  test('a scalar over 90 days is gated on the days the code saw: n counts the present ones', async () => {
    const [built] = await runner.buildSeries({ daily: health.daily }, [
      spec('rhr-90', 'scalar', 'resting_heart_rate', null, 90),
    ]);
    const [outcome] = await runner.run([built!.series]);

    const present = health.daily.slice(-90).filter((row) => row.resting_heart_rate !== null).length;
    expect(present).toBeLessThan(90); // the generator leaves gaps, so n is not just the window length
    expect(built!.series.feature_values).toHaveLength(90);
    expect(outcome!.gates[0]).toMatchObject({ gate: 'sample_size', detail: { n: present } });
  });

  test('a composite feature is the one the sandbox computes: hrv_rhr_ratio is HRV over resting heart rate', async () => {
    const [built] = await runner.buildSeries({ daily: health.daily }, [
      spec('ratio', 'scalar', 'hrv_rhr_ratio', null, 30),
    ]);
    const expected = health.daily
      .slice(-30)
      .map((row) =>
        row.heart_rate_variability === null || row.resting_heart_rate === null
          ? null
          : row.heart_rate_variability / row.resting_heart_rate,
      );
    expect(built!.missingColumns).toEqual([]);
    expect(built!.series.feature_values).toEqual(expected);
  });

  test('a feature no column holds comes back all null, named, and is rejected by sample_size', async () => {
    const [built] = await runner.buildSeries({ daily: health.daily }, [spec('vo2', 'scalar', 'vo2_max', null, 30)]);
    const [outcome] = await runner.run([built!.series]);

    expect(built).toEqual({
      series: expect.objectContaining({ feature_values: Array(30).fill(null) }),
      missingColumns: ['vo2_max'],
    });
    expect(outcome).toMatchObject({ verdict: 'rejected', hard_rejection: 'sample_size' });
    expect(outcome!.gates[0]!.detail).toMatchObject({ n: 0 });
  });

  test('no specs need no process; a bad spec is refused here, unreadable rows by the process', async () => {
    const fresh = createGatesRunner({ python: defaultPythonPath() });
    await expect(fresh.buildSeries({ daily: health.daily }, [])).resolves.toEqual([]);
    await expect(fresh.buildSeries({ daily: health.daily }, [spec('w', 'scalar', 'steps', null, 0)])).rejects.toEqual(
      expectGatesRunnerError('invalid_input'),
    );
    expect(fresh.pids).toEqual([]);
    await fresh.close();

    const misdated = [{ ...health.daily[0]!, date: '01/11/2026' }];
    await expect(runner.buildSeries({ daily: misdated }, [spec('s', 'scalar', 'steps', null, null)])).rejects.toEqual(
      expectGatesRunnerError('request_failed'),
    );
  });
});

describe('findings contract', () => {
  const outcome: GatesOutcome = {
    finding_id: 'ds-001',
    gates: [{ gate: 'sample_size', verdict: 'failed', detail: { applicable: true, n: 4, min_required: 20 } }],
    verdict: 'rejected',
    hard_rejection: 'sample_size',
    passes: 0,
    applicable: 1,
  };

  test('outcomes that contradict themselves are refused', () => {
    expect(gatesOutcomeSchema.safeParse(outcome).success).toBe(true);
    expect(gatesOutcomeSchema.safeParse({ ...outcome, verdict: 'conditional' }).success).toBe(false);
    expect(gatesOutcomeSchema.safeParse({ ...outcome, passes: 2 }).success).toBe(false);
    const skippedButApplicable = { ...outcome.gates[0]!, verdict: 'skipped' };
    expect(gatesOutcomeSchema.safeParse({ ...outcome, gates: [skippedButApplicable] }).success).toBe(false);
  });

  test('each kind carries exactly the series it is gated on', () => {
    const trend = { finding: finding('t', 'trend'), feature_values: [1, 2, null, 4], recent_start: 2 };
    expect(findingSeriesSchema.safeParse(trend).success).toBe(true);
    expect(findingSeriesSchema.safeParse({ ...trend, recent_start: 5 }).success).toBe(false);
    expect(findingSeriesSchema.safeParse({ ...trend, recent_start: undefined }).success).toBe(false);
    expect(findingSeriesSchema.safeParse({ ...trend, target_values: [1, 2, 3, 4] }).success).toBe(false);
    const scalar = { finding: finding('s', 'scalar'), feature_values: [1, 2] };
    expect(findingSeriesSchema.safeParse(scalar).success).toBe(true);
    expect(findingSeriesSchema.safeParse({ ...scalar, recent_start: 1 }).success).toBe(false);
    expect(findingSeriesSchema.safeParse(associationSeries('a', 5, 0.5, 1)).success).toBe(true);
    const withoutTarget = { ...associationSeries('a', 5, 0.5, 1), target_values: undefined };
    expect(findingSeriesSchema.safeParse(withoutTarget).success).toBe(false);
  });
});
