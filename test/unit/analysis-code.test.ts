/**
 * The scripted model's pandas code is real: run in the real sandbox on generated health data, each
 * canonical ask returns the same statistic computed independently here from the same rows.
 */
import { defaultPythonPath } from '../../platform/gates';
import { generateHealthData } from '../../dev/synthetic-data/generate';
import { createSandbox } from '../../platform/sandbox';
import { analysisCode } from '../../dev/scripted-model/rules/analysis-code';
import type { AnalysisAsk } from '../../dev/scripted-model/rules/analysis-ask';

const data = generateHealthData({ seed: 7, days: 180, endDate: new Date('2026-11-01T00:00:00Z') });
const sandbox = createSandbox({ python: defaultPythonPath() });
const run = async (ask: AnalysisAsk) => {
  const result = await sandbox.run({
    code: analysisCode(ask),
    data: { summary: data.daily, activities: data.workouts, profile: data.profile },
  });
  if (result.status !== 'ok') throw new Error(`${result.kind}: ${result.message}\n${result.traceback ?? ''}`);
  return result.result as Record<string, number>;
};

const lastDays = (days: number) => data.daily.slice(-days);
const present = (values: Array<number | null>) => values.filter((v): v is number => v !== null);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

test('mean over a trailing window', async () => {
  const expected = present(lastDays(90).map((d) => d.resting_heart_rate));
  const out = await run({ statistic: 'mean', metric: 'resting_heart_rate', windowDays: 90 });
  expect(out.n).toBe(expected.length);
  expect(out.mean).toBeCloseTo(mean(expected), 9);
});

test('median over all days', async () => {
  const sorted = present(data.daily.map((d) => d.steps)).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  expect((await run({ statistic: 'median', metric: 'steps' })).median).toBeCloseTo(median, 9);
});

test('recent vs prior change', async () => {
  const recent = present(lastDays(30).map((d) => d.resting_heart_rate));
  const prior = present(data.daily.slice(-60, -30).map((d) => d.resting_heart_rate));
  const out = await run({ statistic: 'change', metric: 'resting_heart_rate', windowDays: 30 });
  expect(out.change).toBeCloseTo(mean(recent) - mean(prior), 9);
  expect(out.n).toBe(recent.length + prior.length);
});

test('spearman correlation of a planted pair is clearly positive', async () => {
  const out = await run({
    statistic: 'correlation',
    metric: 'active_zone_minutes',
    other: 'deep_sleep_minutes',
    windowDays: 180,
  });
  expect(out.rho).toBeGreaterThan(0.3);
  expect(out.n).toBeGreaterThan(140);
});

test('day-of-week breakdown names the highest and lowest days', async () => {
  const out = (await run({ statistic: 'day_of_week', metric: 'sleep_minutes' })) as unknown as {
    by_day: Record<string, number>;
    highest_day: string;
  };
  expect(Object.keys(out.by_day)).toHaveLength(7);
  expect(out.by_day[out.highest_day]).toBe(Math.max(...Object.values(out.by_day)));
});
