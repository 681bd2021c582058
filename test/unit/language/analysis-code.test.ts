/**
 * The pandas the scripted model writes for a spec is real: run in the real sandbox on generated data, each
 * statistic and window comes back equal to the same number computed here, independently, from the rows.
 */
import { defaultPythonPath } from '../../../platform/gates';
import { createSandbox } from '../../../platform/sandbox';
import { generateHealthData } from '../../../dev/synthetic-data/generate';
import { analysisCodeFor } from '../../../dev/scripted-model/language/analysis-code';
import type { DataSpec } from '../../../dev/scripted-model/language/understanding';
import { spearman } from '../../../checks/statistics';

const END = '2026-11-01';
const data = generateHealthData({ seed: 7, days: 180, endDate: new Date(`${END}T00:00:00Z`) });
const sandbox = createSandbox({ python: defaultPythonPath() });

async function run(spec: DataSpec): Promise<Record<string, number | string>> {
  const result = await sandbox.run({
    code: analysisCodeFor(spec),
    data: { summary: data.daily, activities: data.workouts, labs: data.biomarkers, profile: data.profile },
  });
  if (result.status !== 'ok') throw new Error(`${result.kind}: ${result.message}\n${result.traceback ?? ''}`);
  return result.result as Record<string, number | string>;
}

const DAY_MS = 86_400_000;
/** Days back from the end: 0 is the last day. */
const daysBack = (date: string) => (Date.parse(`${END}T00:00:00Z`) - Date.parse(`${date}T00:00:00Z`)) / DAY_MS;
const inWindow = (date: string, days: number, offset = 0) => daysBack(date) >= offset && daysBack(date) < offset + days;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const values = (rows: typeof data.daily, metric: 'steps' | 'sleep_minutes' | 'resting_heart_rate') =>
  rows.map((r) => r[metric]).filter((v): v is number => v !== null);

const spec = (s: Partial<DataSpec> & Pick<DataSpec, 'statistic' | 'feature' | 'window'>): DataSpec => ({
  kind: 'description',
  target: null,
  ...s,
});

test('a mean over the week before the last one', async () => {
  const expected = values(
    data.daily.filter((r) => inWindow(r.date, 7, 7)),
    'sleep_minutes',
  );
  const out = await run(spec({ statistic: 'mean', feature: 'sleep_minutes', window: { days: 7, offset: 7 } }));
  expect(out.n).toBe(expected.length);
  expect(out.mean).toBeCloseTo(mean(expected), 9);
});

test('the most steps in a day over the last 30 days, and which day', async () => {
  const rows = data.daily.filter((r) => inWindow(r.date, 30) && r.steps !== null);
  const best = rows.reduce((a, b) => (b.steps! > a.steps! ? b : a));
  const out = await run(spec({ statistic: 'max', feature: 'steps', window: { days: 30 } }));
  expect(out).toMatchObject({ max: best.steps, date: best.date, n: rows.length });
});

test('running: how many and for how long since a date', async () => {
  const runs = data.workouts.filter((w) => w.type === 'running' && w.date >= '2026-09-01');
  const count = await run(
    spec({ statistic: 'count', feature: 'workouts', workout_type: 'running', window: { since: '09-01' } }),
  );
  const total = await run(
    spec({ statistic: 'total', feature: 'workouts', workout_type: 'running', window: { since: '09-01' } }),
  );
  expect(count.count).toBe(runs.length);
  expect(total.total).toBeCloseTo(
    runs.reduce((a, w) => a + w.duration_minutes, 0),
    9,
  );
});

test('weekends against weekdays', async () => {
  const day = (date: string) => new Date(`${date}T00:00:00Z`).getUTCDay();
  const weekend = values(
    data.daily.filter((r) => [0, 6].includes(day(r.date))),
    'steps',
  );
  const weekday = values(
    data.daily.filter((r) => ![0, 6].includes(day(r.date))),
    'steps',
  );
  const out = await run(
    spec({ kind: 'comparison', statistic: 'difference', feature: 'steps', target: 'weekend', window: { days: null } }),
  );
  expect(out.difference).toBeCloseTo(mean(weekend) - mean(weekday), 9);
});

test('this fortnight against the one before', async () => {
  const now = values(
    data.daily.filter((r) => inWindow(r.date, 14)),
    'resting_heart_rate',
  );
  const before = values(
    data.daily.filter((r) => inWindow(r.date, 14, 14)),
    'resting_heart_rate',
  );
  const out = await run(
    spec({
      kind: 'comparison',
      statistic: 'difference',
      feature: 'resting_heart_rate',
      target: 'previous_period',
      window: { days: 14 },
    }),
  );
  expect(out.difference).toBeCloseTo(mean(now) - mean(before), 9);
  expect(out.n).toBe(now.length + before.length);
});

test('last night is the last day', async () => {
  const last = data.daily.at(-1)!;
  const out = await run(spec({ statistic: 'latest', feature: 'sleep_minutes', window: { days: 1 } }));
  expect(out).toMatchObject({ value: last.sleep_minutes, date: last.date, n: 1 });
});

test("a lab's latest panel against the one before and the first, from labs_df", async () => {
  const panels = data.biomarkers
    .filter((b) => b.name === 'ldl_cholesterol')
    .sort((a, b) => a.taken_on.localeCompare(b.taken_on));
  expect(panels.length).toBeGreaterThanOrEqual(2);
  const [first, previous, latest] = [panels[0], panels.at(-2)!, panels.at(-1)!];
  const out = await run(spec({ statistic: 'latest_change', feature: 'ldl_cholesterol', window: { days: null } }));
  expect(out).toMatchObject({
    latest: latest.value,
    latest_date: latest.taken_on,
    previous: previous.value,
    first: first.value,
    n: panels.length,
  });
  expect(out.change).toBeCloseTo(latest.value - previous.value, 9);
  const only = await run(spec({ statistic: 'latest', feature: 'ldl_cholesterol', window: { days: null } }));
  expect(only).toMatchObject({ value: latest.value, date: latest.taken_on, n: 1 });
});

test('a weekly rate: runs and their kilometres over the last 90 days, rest days included', async () => {
  const runs = data.workouts.filter((w) => w.type === 'running' && inWindow(w.date, 90));
  const count = await run(
    spec({ statistic: 'per_week', feature: 'workouts', workout_type: 'running', window: { days: 90 } }),
  );
  expect(count).toMatchObject({ total: runs.length, n: runs.length });
  expect(count.per_week).toBeCloseTo(runs.length / (90 / 7), 9);
  const monthly = await run(spec({ statistic: 'per_month', feature: 'workouts', window: { days: null } }));
  // Every day the data covers, from its first day to its last.
  const days = daysBack(data.daily[0].date) + 1;
  expect(monthly.per_month).toBeCloseTo(data.workouts.length / (days / (365.2425 / 12)), 9);
});

test('a calendar month of workouts: October, from its first to its last day', async () => {
  const october = data.workouts.filter((w) => w.date >= '2026-10-01' && w.date <= '2026-10-31');
  const out = await run(spec({ statistic: 'count', feature: 'workouts', window: { since: '10-01', until: '10-31' } }));
  expect(out.count).toBe(october.length);
});

test('a conditioned comparison: minutes worked out each day (0 on a rest day) against sleep that day', async () => {
  const minutes = new Map<string, number>();
  for (const w of data.workouts) minutes.set(w.date, (minutes.get(w.date) ?? 0) + w.duration_minutes);
  const pairs = data.daily.filter((d) => d.sleep_score !== null);
  const out = await run({
    kind: 'association',
    statistic: 'spearman',
    feature: 'workouts',
    target: 'sleep_score',
    window: { days: null },
  });
  expect(out.n).toBe(pairs.length);
  const rho = spearman(
    pairs.map((d) => minutes.get(d.date) ?? 0),
    pairs.map((d) => d.sleep_score!),
  );
  expect(out.rho).toBeCloseTo(rho!, 9);
});
