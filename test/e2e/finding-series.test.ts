/**
 * GET /v1/turns/:id/findings/:finding_id/series on the real service: after a data question on the demo user,
 * each finding's series is the window's days from the turn's snapshot, and the finding's numbers are
 * recomputed from its points (a mean, a Spearman rho) within the fact-check's tolerance. Another user's
 * key, an unknown finding and a turn without a snapshot are 404.
 */
import { withinTolerance } from '../../contracts/fact-tolerance';
import { findingSeriesResponseSchema, type FindingSeriesResponse } from '../../contracts/finding-series';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { turnSchema, type Turn } from '../../contracts/turn';
import { createEventLog } from '../../platform/event-log';
import { mean, spearman } from '../../checks/statistics';
import { api, expectSchema } from '../support/http';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(180_000);

let demo: DemoService;

beforeAll(async () => {
  demo = await startDemoService();
});

afterAll(async () => {
  await demo?.close();
});

async function askAndFinish(question: string): Promise<Turn> {
  const created = await api(demo.svc.url, 'POST', '/v1/turns', {
    key: demo.user.apiKey,
    body: { messages: [{ role: 'user', content: question }] },
  });
  expect(created.status).toBe(201);
  await demo.svc.temporal.workflow
    .getHandle(created.body.id)
    .result()
    .catch(() => undefined);
  const fetched = await api(demo.svc.url, 'GET', `/v1/turns/${created.body.id}`, { key: demo.user.apiKey });
  return expectSchema(turnSchema, fetched.body);
}

/** Each finding's claimed numbers, as the reproduction gate's event reports them. */
async function claimedNumbers(turnId: string): Promise<Map<string, Record<string, unknown>>> {
  const events = await createEventLog(demo.pool).readAfter(turnId, 0, 10_000);
  const claimed = new Map<string, Record<string, unknown>>();
  for (const event of events) {
    if (event.type !== 'validator.gate' || event.data.gate !== 'reproduction') continue;
    const numbers = (event.data.detail as { numbers: Array<{ key: string; claimed: unknown }> }).numbers;
    claimed.set(event.data.finding_id as string, Object.fromEntries(numbers.map((n) => [n.key, n.claimed])));
  }
  return claimed;
}

const seriesOf = (turnId: string, findingId: string, key = demo.user.apiKey) =>
  api(demo.svc.url, 'GET', `/v1/turns/${turnId}/findings/${encodeURIComponent(findingId)}/series`, { key });

const values = (series: FindingSeriesResponse) =>
  series.points.flatMap((p) => ('value' in p && p.value !== null ? [p.value] : []));

const DAY_MS = 86_400_000;

describe('a mean over a window', () => {
  let turn: Turn;
  let findingId: string;
  let claimed: Record<string, unknown>;

  beforeAll(async () => {
    turn = await askAndFinish('What is my average resting heart rate over the last 90 days?');
    expect(turn.status).toBe('completed');
    const numbers = await claimedNumbers(turn.id);
    expect(numbers.size).toBeGreaterThan(0);
    [findingId, claimed] = [...numbers.entries()][0];
  });

  test("the points are the window's days, and their mean is the finding's", async () => {
    const res = await seriesOf(turn.id, findingId);
    expect(res.status).toBe(200);
    const series = expectSchema(findingSeriesResponseSchema, res.body);
    expect(series).toMatchObject({ turn_id: turn.id, finding_id: findingId, kind: 'scalar', recent_from: null });
    expect(series.feature).toBe('resting_heart_rate');
    // Every calendar day of the 90-day window, oldest first, one day apart.
    expect(series.points).toHaveLength(90);
    series.points.forEach((p, i) => {
      if (i > 0) expect(Date.parse(p.date) - Date.parse(series.points[i - 1].date)).toBe(DAY_MS);
    });
    expect(series.first_day).toBe(series.points[0].date);
    expect(series.last_day).toBe(series.points[89].date);
    const observed = values(series);
    const claimedMean = (claimed.mean ?? claimed.value) as number;
    expect(typeof claimedMean).toBe('number');
    expect(withinTolerance(claimedMean, mean(observed)!)).toBe(true);
    if (typeof claimed.n === 'number') expect(observed).toHaveLength(claimed.n);
  });

  test("another user's key, an unknown finding, and a turn without a snapshot are 404", async () => {
    const other = await demo.svc.createUser();
    const foreign = await seriesOf(turn.id, findingId, other.apiKey);
    expect(foreign.status).toBe(404);
    expect(expectSchema(errorEnvelopeSchema, foreign.body).error.code).toBe('not_found');
    expect((await seriesOf(turn.id, 'no-such-finding')).status).toBe(404);
    expect((await seriesOf('turn_01ARZ3NDEKTSV4RRFFQ69G5FAV', findingId)).status).toBe(404);

    // The same finding once the turn's snapshot is gone: there is nothing it was computed from to show.
    await demo.pool.query('DELETE FROM turn_data_snapshots WHERE turn_id = $1', [turn.id]);
    const noSnapshot = await seriesOf(turn.id, findingId);
    expect(noSnapshot.status).toBe(404);
    expect(expectSchema(errorEnvelopeSchema, noSnapshot.body).error.code).toBe('not_found');
  });
});

test("an association: the days as (x, y) pairs, whose Spearman rho is the finding's", async () => {
  const turn = await askAndFinish('Are my active zone minutes related to my deep sleep minutes?');
  const numbers = await claimedNumbers(turn.id);
  const withRho = [...numbers.entries()].filter(([, n]) => typeof n.rho === 'number');
  expect(withRho.length).toBeGreaterThan(0);
  for (const [findingId, claimed] of withRho) {
    const res = await seriesOf(turn.id, findingId);
    expect(res.status).toBe(200);
    const series = expectSchema(findingSeriesResponseSchema, res.body);
    expect(series.kind).toBe('association');
    expect(series.target).not.toBeNull();
    const pairs = series.points.flatMap((p) => ('x' in p && p.x !== null && p.y !== null ? [[p.x, p.y]] : []));
    expect(pairs.length).toBeGreaterThan(10);
    const rho = spearman(
      pairs.map(([x]) => x),
      pairs.map(([, y]) => y),
    )!;
    expect(withinTolerance(claimed.rho as number, rho)).toBe(true);
  }
});

test("a trend: twice its window's days, the recent period from recent_from, whose means are the finding's", async () => {
  const turn = await askAndFinish('Has my resting heart rate changed over the last 30 days?');
  const numbers = await claimedNumbers(turn.id);
  const trends = [...numbers.entries()].filter(([, n]) => typeof n.recent_mean === 'number');
  expect(trends.length).toBeGreaterThan(0);
  for (const [findingId, claimed] of trends) {
    const series = expectSchema(findingSeriesResponseSchema, (await seriesOf(turn.id, findingId)).body);
    expect(series.kind).toBe('trend');
    expect(series.points).toHaveLength(60);
    expect(series.recent_from).toBe(series.points[30].date);
    const recent = values({ ...series, points: series.points.slice(30) });
    const prior = values({ ...series, points: series.points.slice(0, 30) });
    expect(withinTolerance(claimed.recent_mean as number, mean(recent)!)).toBe(true);
    if (typeof claimed.prior_mean === 'number') expect(withinTolerance(claimed.prior_mean, mean(prior)!)).toBe(true);
  }
});
