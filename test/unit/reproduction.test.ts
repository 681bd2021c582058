/**
 * The reproduction gate recomputes every number of a finding from the series the gates judge: a number
 * that does not match rejects the finding, one it cannot recompute makes the finding unreproducible.
 */
import type { AgentFinding, Finding, FindingSeries } from '../../contracts/findings';
import { reproduceFinding, reproductionGate } from '../../checks/reproduction';
import { isDescription } from '../../contracts/statistics';

const finding = (overrides: Partial<Finding>): Finding => ({
  id: 'ds-001',
  claim: 'a claim',
  kind: 'scalar',
  feature: 'steps',
  target: null,
  numbers: {},
  n: 0,
  window: 'the last 7 days',
  ...overrides,
});

const reproduce = (
  f: Finding,
  series: Omit<FindingSeries, 'finding'>,
  statistic?: AgentFinding['statistic'],
  lastDay = '2026-11-22', // a Sunday
) => reproduceFinding({ finding: f, statistic }, { finding: f, ...series }, lastDay);

// Monday 2026-11-16 … Sunday 2026-11-22, one day missing.
const WEEK = [1000, 2000, null, 4000, 5000, 8000, 10000];

describe('descriptions', () => {
  test('a mean, its n and a median of the observed days reproduce', () => {
    const f = finding({ numbers: { mean: 5000, n: 6 } });
    expect(reproduce(f, { feature_values: WEEK }, 'mean').status).toBe('reproduced');
    const m = finding({ numbers: { median: 4500, n: 6 } });
    expect(reproduce(m, { feature_values: WEEK }, 'median').status).toBe('reproduced');
  });

  test('a mean over the wrong days does not, and the gate says what was claimed and what the rows say', () => {
    const f = finding({ numbers: { mean: 6200, n: 6 } });
    const result = reproduce(f, { feature_values: WEEK }, 'mean');
    expect(result.status).toBe('mismatch');
    expect(reproductionGate(result)).toMatchObject({
      gate: 'reproduction',
      verdict: 'failed',
      detail: {
        applicable: true,
        numbers: [
          { key: 'mean', claimed: 6200, recomputed: 5000, reproduced: false },
          { key: 'n', claimed: 6, recomputed: 6, reproduced: true },
        ],
      },
    });
  });

  test('the tolerance is the fact-check’s: 2 % of the value', () => {
    expect(reproduce(finding({ numbers: { total: 30_500 } }), { feature_values: WEEK }, 'total').status).toBe(
      'reproduced',
    );
    expect(reproduce(finding({ numbers: { total: 31_000 } }), { feature_values: WEEK }, 'total').status).toBe(
      'mismatch',
    );
  });

  test('latest, min, max, sd and count', () => {
    const series = { feature_values: WEEK };
    expect(reproduce(finding({ numbers: { value: 10000, n: 1 } }), series, 'latest').status).toBe('reproduced');
    expect(reproduce(finding({ numbers: { min: 1000, max: 10000 } }), series, 'max').status).toBe('reproduced');
    expect(reproduce(finding({ numbers: { sd: 3405.88, mean: 5000 } }), series, 'sd').status).toBe('reproduced');
    expect(reproduce(finding({ numbers: { count: 6 } }), series, 'count').status).toBe('reproduced');
  });

  test('a key the statistic does not produce, or a CI pair, cannot be reproduced: the gate is skipped and says why', () => {
    const result = reproduce(finding({ numbers: { mean: 5000, vo2: 41, ci: [4000, 6000] } }), { feature_values: WEEK });
    expect(result).toMatchObject({
      status: 'unreproducible',
      reason: 'no recomputation of vo2, ci for a mean finding',
    });
    expect(reproductionGate(result)).toMatchObject({ verdict: 'skipped', detail: { applicable: false } });
  });

  test('nothing observed is nothing to report', () => {
    const result = reproduce(finding({ numbers: { n: 0 } }), { feature_values: [null, null] }, 'mean');
    expect(result).toMatchObject({ status: 'unreproducible', reason: 'no observations in the window' });
  });

  test('levels are descriptions; a comparison of days or an association is an inference', () => {
    expect(isDescription({ finding: finding({}), statistic: 'total' })).toBe(true);
    expect(isDescription({ finding: finding({}) })).toBe(true); // a scalar's default statistic is the mean
    expect(isDescription({ finding: finding({}), statistic: 'day_of_week' })).toBe(false);
    expect(isDescription({ finding: finding({}), statistic: 'difference' })).toBe(false);
    expect(isDescription({ finding: finding({ kind: 'trend' }) })).toBe(false);
  });
});

describe('inferences', () => {
  test('a change: the recent window against the one before', () => {
    const f = finding({ kind: 'trend', numbers: { recent_mean: 7, prior_mean: 2, effect: 5 } });
    expect(reproduce(f, { feature_values: [1, 3, 6, 8], recent_start: 2 }).status).toBe('reproduced');
    const flipped = finding({ kind: 'trend', numbers: { effect: -5 } });
    expect(reproduce(flipped, { feature_values: [1, 3, 6, 8], recent_start: 2 }).status).toBe('mismatch');
  });

  test('weekends against weekdays, placed on the calendar by the series’ last day', () => {
    // Saturday 8000 and Sunday 10000; weekdays 1000, 2000, 4000, 5000.
    const f = finding({ numbers: { weekend_mean: 9000, weekday_mean: 3000, difference: 6000, n: 6 } });
    expect(reproduce(f, { feature_values: WEEK }, 'difference').status).toBe('reproduced');
    // The same values ending on a Wednesday put other days at the weekend.
    expect(reproduce(f, { feature_values: WEEK }, 'difference', '2026-11-18').status).toBe('mismatch');
  });

  test('day of week', () => {
    const f = finding({
      numbers: { by_day_monday: 1000, by_day_sunday: 10000, highest_mean: 10000, lowest_mean: 1000 },
    });
    expect(reproduce(f, { feature_values: WEEK }, 'day_of_week').status).toBe('reproduced');
  });

  test('a Spearman rho over the days with both values, and its sign', () => {
    const association = (rho: number) =>
      finding({ kind: 'association', target: 'sleep_minutes', numbers: { rho, n: 4 } });
    const series = { feature_values: [1, 2, 3, 4, null], target_values: [10, 20, 40, 30, 50] };
    expect(reproduce(association(0.8), series).status).toBe('reproduced');
    expect(reproduce(association(-0.8), series).status).toBe('mismatch');
  });
});

describe('workouts and lab panels', () => {
  // LDL panels, oldest first, on their days (a description of labs is one value per panel).
  const PANELS = { feature_values: [150, 129.9, 118], dates: ['2026-01-24', '2026-06-23', '2026-10-31'] };

  test("a lab's latest change: the latest panel against the previous one and the first, all facts", () => {
    const f = finding({
      feature: 'ldl_cholesterol',
      numbers: { latest: 118, previous: 129.9, change: -11.9, first: 150, change_since_first: -32, n: 3 },
    });
    const result = reproduce(f, PANELS, 'latest_change');
    expect(result.status).toBe('reproduced');
    expect(isDescription({ finding: f, statistic: 'latest_change' })).toBe(true);
  });

  test('a change the other way round does not reproduce', () => {
    const f = finding({ feature: 'ldl_cholesterol', numbers: { latest: 118, change: 11.9 } });
    expect(reproduce(f, PANELS, 'latest_change').status).toBe('mismatch');
  });

  test('one panel has no change to report', () => {
    const f = finding({ feature: 'ldl_cholesterol', numbers: { latest: 118, change: 0 } });
    const result = reproduce(f, { feature_values: [118], dates: ['2026-10-31'] }, 'latest_change');
    expect(result).toMatchObject({
      status: 'unreproducible',
      reason: 'no recomputation of change for a latest_change finding',
    });
  });

  test("a workouts trend's period totals are the sums of its per-day counts", () => {
    // 14 days, the recent 7 from index 7: 2 workouts before, 3 in the recent week.
    const perDay = [0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0];
    const f = finding({
      kind: 'trend',
      feature: 'workouts',
      numbers: { recent_total: 3, prior_total: 2, total_change: 1 },
    });
    expect(reproduce(f, { feature_values: perDay, recent_start: 7 }, 'change').status).toBe('reproduced');
    const wrong = finding({ kind: 'trend', feature: 'workouts', numbers: { recent_total: 4 } });
    expect(reproduce(wrong, { feature_values: perDay, recent_start: 7 }, 'change').status).toBe('mismatch');
  });

  test("a weekly rate is the window's total over its length in weeks, rest days included", () => {
    // 6 runs of 5 km in a 28-day window: 1.5 runs and 7.5 km a week.
    const runs = {
      feature_values: [5, 5, 5, 5, 5, 5],
      dates: ['2026-11-01', '2026-11-04', '2026-11-08', '2026-11-12', '2026-11-20', '2026-11-25'],
    };
    const f = finding({ feature: 'distance_km', numbers: { per_week: 7.5, total: 30, weeks: 4, n: 6 } });
    const rate = (windowDays: number | null) =>
      reproduceFinding({ finding: f, statistic: 'per_week', windowDays }, { finding: f, ...runs }, '2026-11-28');
    expect(rate(28).status).toBe('reproduced');
    expect(rate(14).status).toBe('mismatch');
    // Without a window's length there is no rate to recompute.
    expect(rate(null)).toMatchObject({ status: 'unreproducible' });
  });

  test("days of the week come from the series' own dates when it carries them", () => {
    // Two workouts on Saturdays, one on a Monday, out of calendar order with the last day.
    const series = { feature_values: [30, 60, 45], dates: ['2026-11-07', '2026-11-09', '2026-11-14'] };
    const f = finding({ numbers: { by_day_saturday: 37.5, by_day_monday: 60 } });
    expect(reproduce(f, series, 'day_of_week', '2026-11-30').status).toBe('reproduced');
  });
});
