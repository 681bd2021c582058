/**
 * The Health data API (docs/api.md#health-data) through the SDK, over real HTTP against a real database:
 * daily summaries, workouts and the profile; the validator's refusals, each of which stores nothing (read
 * back to prove it); the row cap; and one user's data invisible to another.
 */
import { Amy, APIError, NotFoundError, type DailySummary, type DailySummaryInput } from '@amy/sdk';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { MAX_DATA_ROWS_PER_REQUEST, dailyListSchema, workoutListSchema } from '../../contracts/data';
import { DAILY_METRICS, formatIsoDate } from '../../contracts/health-records';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

let svc: TestService;
let alice: Amy;
let bob: Amy;
let aliceKey: string;

beforeAll(async () => {
  svc = await startTestService();
  const a = await svc.createUser('alice');
  const b = await svc.createUser('bob');
  aliceKey = a.apiKey;
  alice = new Amy({ apiKey: a.apiKey, baseUrl: svc.url, maxRetries: 0 });
  bob = new Amy({ apiKey: b.apiKey, baseUrl: svc.url, maxRetries: 0 });
});
afterAll(async () => {
  await svc?.close();
});

/** The day `offset` days from today in UTC (negative: in the past). */
const day = (offset: number) => formatIsoDate(new Date(Date.now() + offset * 86_400_000));

const night = {
  sleep_minutes: 420,
  deep_sleep_minutes: 80,
  rem_sleep_minutes: 95,
  light_sleep_minutes: 210,
  awake_minutes: 35,
};

/** A whole row as the API returns it: every metric, null where none was sent. */
const stored = (row: DailySummaryInput): DailySummary =>
  ({ ...Object.fromEntries(DAILY_METRICS.map((m) => [m, null])), ...row }) as DailySummary;

async function allDays(client: Amy, from?: string, to?: string): Promise<DailySummary[]> {
  const days: DailySummary[] = [];
  for await (const row of client.data.daily.list({ from, to })) days.push(row);
  return days;
}

/** The refusal of a call, which must be the envelope's `400 invalid_field` naming `field`. */
async function refusal(call: PromiseLike<unknown>, field: string) {
  const err = await Promise.resolve(call).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  const apiError = err as APIError;
  expect({ status: apiError.status, code: apiError.code, field: apiError.field }).toEqual({
    status: 400,
    code: 'invalid_field',
    field,
  });
  return apiError;
}

describe('daily summaries', () => {
  const base = [
    { date: day(-3), steps: 8000, resting_heart_rate: 58.5, ...night },
    { date: day(-2), steps: 9100, heart_rate_variability: 48.2 },
    { date: day(-1), steps: 7200, sleep_score: 81 },
  ];

  test('upsert stores the rows, a missing metric is null, and they read back oldest first', async () => {
    expect(await alice.data.daily.upsert([base[2], base[0], base[1]])).toEqual({ inserted: 3, updated: 0 });
    expect(await allDays(alice)).toEqual(base.map(stored));
  });

  test('upserting a day again replaces it, the others are kept', async () => {
    const changed = { date: day(-2), steps: 12_345, stress_management_score: 40 };
    expect(await alice.data.daily.upsert([changed])).toEqual({ inserted: 0, updated: 1 });
    expect(await allDays(alice)).toEqual([stored(base[0]), stored(changed), stored(base[2])]);
    await alice.data.daily.upsert([base[1]]);
  });

  test('pages by cursor with from/to inclusive', async () => {
    const page = await alice.data.daily.list({ from: day(-3), to: day(-2), limit: 1 });
    expectSchema(dailyListSchema, { data: page.data, next_cursor: page.next_cursor, has_more: page.has_more });
    expect(page.data.map((d) => d.date)).toEqual([day(-3)]);
    expect(page.has_more).toBe(true);
    const next = await page.getNextPage();
    expect(next.data.map((d) => d.date)).toEqual([day(-2)]);
    expect(next.has_more).toBe(false);
    expect((await allDays(alice, day(-2))).map((d) => d.date)).toEqual([day(-2), day(-1)]);
  });

  test.each<[string, (good: DailySummaryInput[]) => unknown[], string]>([
    ['a value out of range', (good) => [...good, { date: day(-10), steps: -5 }], 'rows[3].steps'],
    ['a fraction in an Int column', (good) => [{ date: day(-10), steps: 10.5 }, ...good], 'rows[0].steps'],
    [
      'sleep stages longer than the night',
      (good) => [good[0], { date: day(-10), ...night, sleep_minutes: 300 }, good[1]],
      'rows[1].sleep_minutes',
    ],
    ['a future date', (good) => [...good, { date: day(1), steps: 100 }], 'rows[3].date'],
    ['an impossible calendar date', (good) => [...good, { date: '2025-02-30', steps: 100 }], 'rows[3].date'],
    ['a duplicate date', (good) => [...good, { date: good[0].date, steps: 100 }], 'rows[3].date'],
    ['an unknown field', (good) => [...good, { date: day(-10), calories: 2000 }], 'rows[3].calories'],
    ['a number as text', (good) => [{ date: day(-10), steps: '8000' }, ...good], 'rows[0].steps'],
  ])('%s is a 400 naming the row and field, and nothing is stored', async (_kind, rows, field) => {
    const before = await allDays(alice);
    const changed = base.map((row) => ({ ...row, steps: 1 }));
    const err = await refusal(alice.data.daily.upsert(rows(changed) as DailySummaryInput[]), field);
    expect(err.message).toContain(field);
    expect(await allDays(alice)).toEqual(before);
  });

  test('the refusal is the envelope, and names no value', async () => {
    const res = await api(svc.url, 'POST', '/v1/data/daily', {
      key: aliceKey,
      body: { rows: [{ date: day(-10), resting_heart_rate: 4242 }] },
    });
    expect(res.status).toBe(400);
    const { error } = expectSchema(errorEnvelopeSchema, res.body);
    expect(error).toMatchObject({ code: 'invalid_field', field: 'rows[0].resting_heart_rate' });
    expect(error.request_id).toBe(res.headers.get('x-request-id'));
    expect(error.message).not.toContain('4242');
  });

  test(`at most ${MAX_DATA_ROWS_PER_REQUEST} rows a request: one more is a 400 and stores nothing`, async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ date: day(-100 - i), steps: 5000 }));
    const before = await allDays(alice);
    await refusal(alice.data.daily.upsert(rows(MAX_DATA_ROWS_PER_REQUEST + 1)), 'rows');
    expect(await allDays(alice)).toEqual(before);
    expect(await alice.data.daily.upsert(rows(MAX_DATA_ROWS_PER_REQUEST))).toEqual({
      inserted: MAX_DATA_ROWS_PER_REQUEST,
      updated: 0,
    });
    // A whole range goes in one call, and the count comes back.
    expect(await alice.data.daily.delete({ from: day(-100 - MAX_DATA_ROWS_PER_REQUEST), to: day(-100) })).toBe(
      MAX_DATA_ROWS_PER_REQUEST,
    );
    expect(await allDays(alice)).toEqual(before);
  });

  test('DELETE by range removes exactly the days in it, and needs both ends', async () => {
    await alice.data.daily.upsert([
      { date: day(-20), steps: 1 },
      { date: day(-21), steps: 2 },
      { date: day(-22), steps: 3 },
    ]);
    expect(await alice.data.daily.delete({ from: day(-21), to: day(-20) })).toBe(2);
    expect((await allDays(alice, day(-30), day(-10))).map((d) => d.date)).toEqual([day(-22)]);
    const res = await api(svc.url, 'DELETE', `/v1/data/daily?from=${day(-30)}`, { key: aliceKey });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('to');
  });

  test('a range that ends before it starts, or a cursor not from the API, is a 400', async () => {
    await refusal(alice.data.daily.list({ from: day(-1), to: day(-2) }), 'to');
    await refusal(alice.data.daily.list({ from: '2026-02-30' }), 'from');
    await refusal(alice.data.daily.list({ cursor: 'bm90LWEtY3Vyc29y' }), 'cursor');
  });

  test("another user's days are invisible to a reader and a delete", async () => {
    expect(await allDays(bob)).toEqual([]);
    expect(await bob.data.daily.delete({ from: day(-400), to: day(0) })).toBe(0);
    expect((await allDays(alice)).length).toBeGreaterThan(0);
  });
});

describe('workouts', () => {
  const run = {
    external_id: 'garmin:run/0001',
    date: day(-5),
    type: 'running' as const,
    duration_minutes: 42,
    distance_km: 8.4,
    calories: 520,
    avg_heart_rate: 151,
  };
  const yoga = { external_id: 'yoga-7', date: day(-4), type: 'yoga' as const, duration_minutes: 45 };

  test('upsert by external_id is idempotent: the same id again updates the one workout', async () => {
    expect(await alice.data.workouts.upsert([run, yoga])).toEqual({ inserted: 2, updated: 0 });
    expect(await alice.data.workouts.upsert([{ ...run, duration_minutes: 50 }])).toEqual({ inserted: 0, updated: 1 });
    const page = await alice.data.workouts.list();
    expectSchema(workoutListSchema, { data: page.data, next_cursor: page.next_cursor, has_more: page.has_more });
    expect(page.data).toEqual([
      { ...run, duration_minutes: 50 },
      { ...yoga, distance_km: null, calories: null, avg_heart_rate: null },
    ]);
  });

  test('lists by type and day range, a page at a time', async () => {
    await alice.data.workouts.upsert([
      { external_id: 'ride-1', date: day(-3), type: 'cycling', duration_minutes: 60, distance_km: 25 },
      { external_id: 'run-2', date: day(-2), type: 'running', duration_minutes: 30 },
    ]);
    const runs = [];
    for await (const workout of alice.data.workouts.list({ type: 'running', limit: 1 })) runs.push(workout.external_id);
    expect(runs).toEqual(['garmin:run/0001', 'run-2']);
    const between = await alice.data.workouts.list({ from: day(-4), to: day(-3) });
    expect(between.data.map((w) => w.external_id)).toEqual(['yoga-7', 'ride-1']);
  });

  test.each<[string, unknown[], string]>([
    ['a duplicate external_id', [yoga, { ...yoga, duration_minutes: 10 }], 'rows[1].external_id'],
    ['a type not in the list', [{ ...yoga, type: 'curling' }], 'rows[0].type'],
    ['an external_id that is not visible ASCII', [{ ...yoga, external_id: 'a b' }], 'rows[0].external_id'],
    ['a duration out of range', [yoga, { ...run, duration_minutes: 0 }], 'rows[1].duration_minutes'],
    ['a future date', [{ ...yoga, date: day(2) }], 'rows[0].date'],
    ['an unknown field', [{ ...yoga, steps: 10 }], 'rows[0].steps'],
  ])('%s is a 400 naming the row and field, and nothing is stored', async (_kind, rows, field) => {
    const before = await alice.data.workouts.list();
    await refusal(alice.data.workouts.upsert(rows as never), field);
    expect((await alice.data.workouts.list()).data).toEqual(before.data);
  });

  test('an external_id is unique per user: the same id from another user is another workout', async () => {
    expect(await bob.data.workouts.upsert([{ ...yoga, duration_minutes: 15 }])).toEqual({ inserted: 1, updated: 0 });
    expect((await alice.data.workouts.list()).data.find((w) => w.external_id === 'yoga-7')?.duration_minutes).toBe(45);
    await bob.data.workouts.delete('yoga-7');
  });

  test("delete by external_id; another user's workout is a 404", async () => {
    await expect(bob.data.workouts.delete('ride-1')).rejects.toBeInstanceOf(NotFoundError);
    expect((await bob.data.workouts.list()).data).toEqual([]);
    await alice.data.workouts.delete('garmin:run/0001');
    expect((await alice.data.workouts.list()).data.map((w) => w.external_id)).toEqual(['yoga-7', 'ride-1', 'run-2']);
    await expect(alice.data.workouts.delete('garmin:run/0001')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('profile', () => {
  test('404 before one is written; put then get returns it; put again replaces it', async () => {
    await expect(alice.data.profile.get()).rejects.toBeInstanceOf(NotFoundError);
    const profile = { sex: 'female' as const, birth_year: 1988, height_cm: 168.5, weight_kg: 61.2 };
    expect(await alice.data.profile.put(profile)).toEqual(profile);
    expect(await alice.data.profile.get()).toEqual(profile);
    await alice.data.profile.put({ ...profile, weight_kg: 60 });
    expect(await alice.data.profile.get()).toEqual({ ...profile, weight_kg: 60 });
    await expect(bob.data.profile.get()).rejects.toBeInstanceOf(NotFoundError);
  });

  test('a bad profile is a 400 naming the field, and the stored one is kept', async () => {
    const before = await alice.data.profile.get();
    const nextYear = new Date().getUTCFullYear() + 1;
    await refusal(alice.data.profile.put({ ...before, birth_year: nextYear }), 'birth_year');
    await refusal(alice.data.profile.put({ ...before, height_cm: 20 }), 'height_cm');
    await refusal(alice.data.profile.put({ ...before, sex: 'other' } as never), 'sex');
    await refusal(alice.data.profile.put({ ...before, eyes: 'blue' } as never), 'eyes');
    expect(await alice.data.profile.get()).toEqual(before);
  });
});
