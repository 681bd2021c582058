import { buildFactSheet, type FactSheetFinding } from '../../checks/fact-sheet';

const finding = (
  id: string,
  numbers: Record<string, unknown>,
  verdict: FactSheetFinding['verdict'] = 'validated',
  window = 'all available days',
) => ({
  finding: { id, numbers, n: 87, window, unit: null },
  verdict,
  source: 'data_science',
});

describe('buildFactSheet', () => {
  test('keys are <finding>.<key>; CI pairs split into _low/_high', () => {
    const { sheet } = buildFactSheet([finding('ds-001', { effect: -0.374, n: 87, ci: [-0.42, -0.31] })]);
    expect(sheet).toEqual({ 'ds-001.effect': -0.374, 'ds-001.n': 87, 'ds-001.ci_low': -0.42, 'ds-001.ci_high': -0.31 });
  });

  test('only finite numbers enter: NaN, Infinity, strings, 3-tuples and nulls are dropped', () => {
    const { sheet } = buildFactSheet([
      finding('ds-001', {
        ok: 1.5,
        nan: NaN,
        inf: Infinity,
        s: '3',
        triple: [1, 2, 3],
        pair_bad: [1, NaN],
        none: null,
      }),
    ]);
    expect(sheet).toEqual({ 'ds-001.ok': 1.5 });
  });

  test('rejected findings contribute nothing; conditional ones are tagged', () => {
    const { sheet, entries } = buildFactSheet([
      finding('ds-001', { effect: 0.4 }, 'rejected'),
      finding('ds-002', { effect: 0.2 }, 'conditional'),
      finding('ds-003', { mean: 60.4 }),
    ]);
    expect(Object.keys(sheet)).toEqual(['ds-002.effect', 'ds-003.mean']);
    expect(entries.find((e) => e.claim === 'ds-002.effect')?.verdict).toBe('conditional');
    expect(entries.find((e) => e.claim === 'ds-003.mean')).not.toHaveProperty('verdict');
  });

  test('duplicate finding ids are suffixed -2, -3 so no number is lost', () => {
    const { sheet } = buildFactSheet([
      finding('ds-001', { mean: 1 }),
      finding('ds-001', { mean: 2 }),
      finding('ds-001', { mean: 3 }),
    ]);
    expect(sheet).toEqual({ 'ds-001.mean': 1, 'ds-001-2.mean': 2, 'ds-001-3.mean': 3 });
  });

  test("a window's lengths are entries of their own, once per length; dates in a window are not lengths", () => {
    const { sheet, entries } = buildFactSheet([
      finding('ds-001', { mean: 60.4 }, 'validated', 'the last 90 days'),
      finding('ds-002', { mean: 7.1 }, 'conditional', 'the 30 days before the last 7 days'),
      finding('ds-003', { mean: 61.2 }, 'validated', 'the last 90 days'),
      finding('ds-004', { mean: 55 }, 'validated', 'the days since 2026-06-01'),
    ]);
    expect(sheet).toEqual({
      'ds-001.mean': 60.4,
      'ds-001.window_days': 90,
      'ds-002.mean': 7.1,
      'ds-002.window_days': 30,
      'ds-002.window_days_2': 7,
      'ds-003.mean': 61.2,
      'ds-004.mean': 55,
    });
    expect(entries.find((e) => e.claim === 'ds-002.window_days')).toEqual({
      claim: 'ds-002.window_days',
      value: 30,
      unit: 'days',
      source: 'data_science',
      n: 87,
      window: 'the 30 days before the last 7 days',
      verdict: 'conditional',
    });
  });

  test('entries carry claim, value, unit, source, n and window', () => {
    const { entries } = buildFactSheet([
      {
        ...finding('ds-001', { avg: 60.39 }),
        finding: { id: 'ds-001', numbers: { avg: 60.39 }, n: 160, window: 'all', unit: 'bpm' },
      },
    ]);
    expect(entries).toEqual([
      { claim: 'ds-001.avg', value: 60.39, unit: 'bpm', source: 'data_science', n: 160, window: 'all' },
    ]);
  });
});
