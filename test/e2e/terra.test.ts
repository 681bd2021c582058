/**
 * Terra in, end to end (docs/terra.md): events built from Terra's own published examples (test/fixtures/terra),
 * signed as Terra signs them and checked with Terra's own SDK (`terra-api`'s verifyTerraWebhookSignature) before
 * they are sent to the compiled API's receiver; ingested by the compiled worker's TerraIngestWorkflow on a real
 * Temporal and Postgres; the backend told through our signed webhooks. Each rule of the receiver, the connections,
 * the mapping into the three tables, large requests, replay and erasure is asked of the running service.
 */
import { Amy, type Turn, type TurnStreamEvent } from '@amy/sdk';
import { verifyTerraWebhookSignature, type Terra } from 'terra-api';
import { withinTolerance } from '../../contracts/fact-tolerance';
import { formatIsoDate } from '../../contracts/health-records';
import { runCli } from '../support/cli';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import {
  asTerraUser,
  dailyEvent,
  deliverToTerraReceiver,
  nowSeconds,
  terraSignature,
  TERRA_TEST_SECRET,
  type TerraDelivery,
} from '../support/terra-delivery';
import { terraExample } from '../support/terra-fixtures';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(240_000);

const MAX_BODY_BYTES = 1024 * 1024;
const DAY_MS = 86_400_000;
/** The last day of the user's Terra data: a fixed past day. */
const LAST = new Date('2026-11-20T00:00:00Z');
const day = (back: number) => formatIsoDate(new Date(LAST.getTime() - back * DAY_MS));

let svc: TestService;
let receiver: WebhookReceiver;
let alice: { userId: string; apiKey: string };
let bob: { userId: string; apiKey: string };

const GARMIN_USER = '40f7b0e1-89e2-43ac-a5b8-1e29c8d47cad';
const APPLE_USER = '6c1e2a77-0f3b-4d5e-9a8b-2f4c6d8e0a11';

beforeAll(async () => {
  [svc, receiver] = await Promise.all([
    startTestService({
      env: {
        TERRA_SIGNING_SECRET: TERRA_TEST_SECRET,
        TERRA_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
        AMY_WEBHOOKS_ALLOW_PRIVATE: '1',
        AMY_WEBHOOK_FIRST_RETRY_SECONDS: '0.5',
      },
    }),
    startWebhookReceiver(),
  ]);
  alice = await svc.createUser('terra-alice');
  bob = await svc.createUser('terra-bob');
  const added = await runCli(
    'scripts/webhooks.ts',
    ['add', '--url', `${receiver.url}/hooks`, '--events', 'data.updated,data.connection_changed'],
    { DATABASE_URL: svc.database.url, AMY_WEBHOOKS_ALLOW_PRIVATE: '1' },
  );
  expect(added.code).toBe(0);
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

const deliver = (event: unknown, opts: TerraDelivery = {}) => deliverToTerraReceiver(svc.url, event, opts);

/** Resolves once every stored event has been ingested (none left `received`). */
async function ingested(): Promise<void> {
  for (;;) {
    const { rows } = await svc.database.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM terra_events WHERE status = 'received'`,
    );
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function until<T>(probe: () => Promise<T | null | undefined | false>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function connectionEvent(
  name: 'auth_success' | 'deauth' | 'access_revoked' | 'connection_error' | 'permission_change',
  terraUser: string,
  provider: string,
  reference: string | null,
) {
  const example = terraExample(name) as { user: Terra.TerraUser };
  return { ...example, user: asTerraUser(example.user, terraUser, provider, reference) };
}

async function dailyOf(userId: string) {
  const { rows } = await svc.database.pool.query<{
    date: string;
    steps: number | null;
    resting_heart_rate: number | null;
    sleep_minutes: number | null;
  }>(
    `SELECT to_char(date, 'YYYY-MM-DD') AS date, steps, resting_heart_rate, sleep_minutes FROM daily_summaries
     WHERE user_id = $1 ORDER BY date`,
    [userId],
  );
  return rows;
}

async function connectionsOf(userId: string) {
  const { rows } = await svc.database.pool.query<{ terra_user_id: string; provider: string; status: string }>(
    'SELECT terra_user_id, provider, status FROM terra_connections WHERE user_id = $1 ORDER BY provider',
    [userId],
  );
  return rows;
}

/** Our webhook events received so far, of one type. */
const hooks = (type: string) =>
  receiver
    .at('/hooks')
    .map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> })
    .filter((event) => event.type === type);

const countEvents = async () =>
  (await svc.database.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM terra_events')).rows[0].n;

describe('the receiver', () => {
  test('refuses what Terra did not sign, before reading it: no header, another secret, an old timestamp, a body changed after signing', async () => {
    const body = JSON.stringify(
      dailyEvent([{ date: day(1), steps: 5000 }], {
        terraUser: GARMIN_USER,
        provider: 'GARMIN',
        reference: alice.userId,
      }),
    );
    const old = nowSeconds() - 400;
    // Terra's SDK refuses the same stale and altered requests.
    await expect(verifyTerraWebhookSignature(body, terraSignature(body, old), TERRA_TEST_SECRET)).rejects.toThrow(
      /too old/,
    );
    const changed = body.replace('5000', '9000');
    await expect(
      verifyTerraWebhookSignature(changed, terraSignature(body, nowSeconds()), TERRA_TEST_SECRET),
    ).rejects.toThrow();

    for (const [signature, sent] of [
      [null, body],
      [terraSignature(body, nowSeconds(), 'another-secret'), body],
      [terraSignature(body, old), body],
      [terraSignature(body, nowSeconds() + 400), body],
      [terraSignature(body, nowSeconds()), changed],
      ['t=1,v1=zz', body],
    ] as const) {
      const res = await deliver(null, { signature, body: sent });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        error: { code: 'invalid_signature', request_id: expect.stringMatching(/^req_/) },
      });
      expect(JSON.stringify(res.body)).not.toContain('5000');
    }
    expect(await countEvents()).toBe(0);
  });

  test('a body over the limit is 413, a signed body that is not JSON or not an event is 400, and nothing is stored', async () => {
    const huge = JSON.stringify({ type: 'daily', padding: 'x'.repeat(MAX_BODY_BYTES) });
    expect((await deliver(null, { body: huge, signature: terraSignature(huge, nowSeconds()) })).body).toMatchObject({
      error: { code: 'payload_too_large' },
    });
    expect(await deliver(null, { body: '{"type": "daily",' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_json' } },
    });
    expect(await deliver({ data: [] })).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(await countEvents()).toBe(0);
  });
});

describe('connections', () => {
  test('auth, a permission change, a revoked access and a reconnection keep the list, and each change is a data.connection_changed', async () => {
    expect((await deliver(connectionEvent('auth_success', GARMIN_USER, 'GARMIN', alice.userId))).status).toBe(200);
    await ingested();
    expect(await connectionsOf(alice.userId)).toEqual([
      { terra_user_id: GARMIN_USER, provider: 'GARMIN', status: 'connected' },
    ]);
    await deliver(connectionEvent('access_revoked', GARMIN_USER, 'GARMIN', alice.userId));
    await ingested();
    expect((await connectionsOf(alice.userId))[0].status).toBe('revoked');
    await deliver(connectionEvent('auth_success', GARMIN_USER, 'GARMIN', alice.userId));
    await ingested();
    expect((await connectionsOf(alice.userId))[0].status).toBe('connected');

    const changes = await until(async () => {
      const seen = hooks('data.connection_changed').filter((e) => e.data.terra_user_id === GARMIN_USER);
      return (
        seen.length >= 3 && seen.sort((a, b) => String(a.data.changed_at).localeCompare(String(b.data.changed_at)))
      );
    });
    expect(changes.map((e) => [e.data.previous_status, e.data.status])).toEqual([
      [null, 'connected'],
      ['connected', 'revoked'],
      ['revoked', 'connected'],
    ]);
    expect(Object.keys(changes[0].data).sort()).toEqual(
      ['changed_at', 'previous_status', 'provider', 'status', 'terra_user_id', 'user_id'].sort(),
    );
  });

  test('out of order: a deauth Terra made after a connection error is delivered first, and the connection still ends disconnected', async () => {
    const base = Date.now();
    await deliver(connectionEvent('auth_success', APPLE_USER, 'APPLE', alice.userId), { orderedAt: base });
    await deliver(connectionEvent('deauth', APPLE_USER, 'APPLE', alice.userId), { orderedAt: base + 2000 });
    await deliver(connectionEvent('connection_error', APPLE_USER, 'APPLE', alice.userId), { orderedAt: base + 1000 });
    await ingested();
    expect((await connectionsOf(alice.userId)).find((c) => c.provider === 'APPLE')?.status).toBe('disconnected');
    // Connected again for the rest of the suite.
    await deliver(connectionEvent('auth_success', APPLE_USER, 'APPLE', alice.userId), { orderedAt: base + 3000 });
    await ingested();
  });
});

describe('data', () => {
  /** 40 days of Garmin: resting heart rate and steps vary from day to day. */
  const GARMIN_DAYS = Array.from({ length: 40 }, (_, i) => ({
    date: day(39 - i),
    steps: 6000 + ((i * 1379) % 5000),
    restingHr: 56 + ((i * 7) % 9),
  }));

  test('daily events become daily rows; a redelivery is one event and no new row', async () => {
    const event = dailyEvent(GARMIN_DAYS, { terraUser: GARMIN_USER, provider: 'GARMIN', reference: alice.userId });
    const first = await deliver(event, { reference: 'daily-1' });
    expect(first).toMatchObject({ status: 200, body: { received: true, duplicate: false } });
    const again = await deliver(event, { reference: 'daily-1' });
    expect(again).toMatchObject({ status: 200, body: { id: first.body.id, duplicate: true } });
    await ingested();
    const rows = await dailyOf(alice.userId);
    expect(rows.map((r) => [r.date, r.steps, r.resting_heart_rate])).toEqual(
      GARMIN_DAYS.map((d) => [d.date, d.steps, d.restingHr]),
    );
    const updated = await until(async () => hooks('data.updated').find((e) => e.data.to === day(0)));
    expect(updated.data).toEqual({
      user_id: alice.userId,
      source: 'terra',
      tables: ['daily_summaries'],
      from: day(39),
      to: day(0),
      backfill_reference: null,
    });
  });

  test("two providers on one day: the watch's steps are kept, the phone's never added to them", async () => {
    const phone = GARMIN_DAYS.slice(-3).map((d) => ({ date: d.date, steps: d.steps + 2500 }));
    await deliver(dailyEvent(phone, { terraUser: APPLE_USER, provider: 'APPLE', reference: alice.userId }));
    await ingested();
    const rows = await dailyOf(alice.userId);
    for (const d of GARMIN_DAYS.slice(-3)) expect(rows.find((r) => r.date === d.date)?.steps).toBe(d.steps);
  });

  test('an older record delivered after a newer one of the same day does not overwrite it', async () => {
    const base = Date.now();
    const target = day(50);
    await deliver(
      dailyEvent([{ date: target, steps: 9000 }], {
        terraUser: GARMIN_USER,
        provider: 'GARMIN',
        reference: alice.userId,
      }),
      { orderedAt: base + 1000 },
    );
    await deliver(
      dailyEvent([{ date: target, steps: 4000 }], {
        terraUser: GARMIN_USER,
        provider: 'GARMIN',
        reference: alice.userId,
      }),
      { orderedAt: base },
    );
    await ingested();
    expect((await dailyOf(alice.userId)).find((r) => r.date === target)?.steps).toBe(9000);
  });

  test('a night counts for the morning it ends, in the time the device reported', async () => {
    const sleep = terraExample('sleep') as Terra.SleepEvent;
    const night = sleep.data[0];
    const event = {
      ...sleep,
      user: asTerraUser(sleep.user, GARMIN_USER, 'GARMIN', alice.userId),
      data: [
        {
          ...night,
          metadata: {
            ...night.metadata,
            start_time: `${day(1)}T23:12:00.000000+01:00`,
            end_time: `${day(0)}T07:02:00.000000+01:00`,
          },
        },
      ],
    };
    await deliver(event);
    await ingested();
    const asleep = night.sleep_durations_data!.asleep!.duration_asleep_state_seconds!;
    const awake = night.sleep_durations_data!.awake!.duration_awake_state_seconds!;
    expect((await dailyOf(alice.userId)).find((r) => r.date === day(0))?.sleep_minutes).toBe(
      Math.round((asleep + awake) / 60),
    );
  });

  test('a question after ingest is answered from the Terra rows, its number reproduced', async () => {
    const amy = new Amy({ apiKey: alice.apiKey, baseUrl: svc.url });
    const created = await amy.turns.create({
      messages: [{ role: 'user', content: 'What is my average resting heart rate over the last 30 days?' }],
    });
    const events: TurnStreamEvent[] = [];
    for await (const event of amy.turns.stream(created.id)) events.push(event);
    const turn: Turn = await amy.turns.get(created.id);
    expect(turn.status).toBe('completed');
    const window = GARMIN_DAYS.slice(-30);
    const mean = window.reduce((sum, d) => sum + d.restingHr, 0) / window.length;
    const value = turn.result!.fact_sheet.find((f) => f.claim === 'ds-001.mean')?.value;
    expect(value !== undefined && withinTolerance(value, mean)).toBe(true);
    expect(
      events.flatMap((e) => (e.type === 'validator.gate' && e.gate === 'reproduction' ? [e.verdict] : [])),
    ).toEqual(['passed']);
  });

  test('a completed lab report becomes lab rows by LOINC, in the canonical unit; a failed one is recorded', async () => {
    const report = terraExample('lab_report_completed') as {
      data: { reference_id: string; results: Record<string, unknown>[] };
    };
    const [hemoglobin] = report.data.results;
    report.data.reference_id = alice.userId;
    report.data.results = [
      hemoglobin,
      {
        source: { name: 'LDL Cholesterol', value: '3.36', units: 'mmol/L', collection_date: day(10) },
        biomarker: { key: 'ldl_cholesterol', display_name: 'LDL Cholesterol', loinc_code: '13457-7' },
        measurement: { type: 'numeric', numeric: 3.36, units: 'mmol/L', ucum_code: 'mmol/L' },
        interpretation: { flag: 'high', source: 'report' },
      },
    ];
    await deliver(report);
    const failed = terraExample('lab_report_failed') as { data: { reference_id: string } };
    failed.data.reference_id = alice.userId;
    await deliver(failed);
    await ingested();
    const { rows } = await svc.database.pool.query<{ name: string; value: number; unit: string; taken_on: string }>(
      `SELECT name, value, unit, to_char(taken_on, 'YYYY-MM-DD') AS taken_on FROM lab_biomarkers WHERE user_id = $1`,
      [alice.userId],
    );
    expect(rows).toEqual([{ name: 'ldl_cholesterol', value: expect.any(Number), unit: 'mg/dL', taken_on: day(10) }]);
    expect(withinTolerance(rows[0].value, (3.36 * 386.65) / 10)).toBe(true);
    const outcomes = await svc.database.pool.query<{ type: string; status: string; outcome: { skipped?: unknown[] } }>(
      `SELECT type, status, outcome FROM terra_events WHERE type LIKE 'lab_report.%' ORDER BY received_at`,
    );
    expect(outcomes.rows.map((r) => [r.type, r.status])).toEqual([
      ['lab_report.completed', 'applied'],
      ['lab_report.failed', 'applied'],
    ]);
    // Hemoglobin is not one of Amy's biomarkers: left out, by path, without its value.
    expect(JSON.stringify(outcomes.rows[0].outcome.skipped)).not.toContain('14.2');
  });
});

describe('whose an event is', () => {
  test('an unknown reference_id waits, attached to nobody, and is applied once a user of that name appears', async () => {
    const stranger = '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
    await deliver(
      dailyEvent([{ date: day(2), steps: 7777 }], {
        terraUser: stranger,
        provider: 'OURA',
        reference: 'backend-user-77',
      }),
    );
    await ingested();
    const { rows } = await svc.database.pool.query<{ status: string; user_id: string | null }>(
      `SELECT status, user_id FROM terra_events WHERE terra_user_id = $1`,
      [stranger],
    );
    expect(rows).toEqual([{ status: 'unmatched', user_id: null }]);
    const late = await svc.createUser('backend-user-77');
    const landed = await until(async () => (await dailyOf(late.userId)).find((r) => r.date === day(2)));
    expect(landed.steps).toBe(7777);
  });

  test("an event whose reference_id names one user and whose Terra user is another's is refused, written for neither", async () => {
    const before = await dailyOf(alice.userId);
    await deliver(
      dailyEvent([{ date: day(3), steps: 12345 }], {
        terraUser: GARMIN_USER,
        provider: 'GARMIN',
        reference: bob.userId,
      }),
    );
    await ingested();
    expect(await dailyOf(bob.userId)).toEqual([]);
    expect(await dailyOf(alice.userId)).toEqual(before);
    const { rows } = await svc.database.pool.query<{ status: string }>(
      `SELECT status FROM terra_events WHERE reference_id = $1`,
      [bob.userId],
    );
    expect(rows).toEqual([{ status: 'refused' }]);
  });
});

describe('a large request', () => {
  const REFERENCE = 'b7c8d9e0-1f2a-4b3c-8d4e-5f6a7b8c9d0e';
  const CHUNKS = 12;
  /** Chunk n holds 30 days, a year back from day 100. */
  const chunkDays = (n: number) =>
    Array.from({ length: 30 }, (_, i) => {
      const back = 100 + (CHUNKS - n) * 30 + (29 - i);
      return { date: day(back), steps: 3000 + back };
    });

  test('its chunks are applied once each, even with the worker killed in the middle, and reported once, when the last has arrived', async () => {
    const who = { terraUser: GARMIN_USER, provider: 'GARMIN', reference: alice.userId };
    const announce = (name: 'large_request_processing' | 'large_request_sending') => {
      const example = terraExample(name) as { user: Terra.TerraUser; reference: string; expected_payloads?: number };
      return {
        ...example,
        reference: REFERENCE,
        user: asTerraUser(example.user, GARMIN_USER, 'GARMIN', alice.userId),
        ...(name === 'large_request_sending' ? { expected_payloads: CHUNKS } : {}),
      };
    };
    await deliver(announce('large_request_processing'), { reference: REFERENCE });
    await deliver(announce('large_request_sending'), { reference: REFERENCE });
    for (let n = 1; n <= CHUNKS / 2; n++) {
      await deliver(dailyEvent(chunkDays(n), who), { reference: `${REFERENCE}:chunk:${n}` });
    }
    // Killed once ingestion of the chunks is under way.
    await until(async () => {
      const { rows } = await svc.database.pool.query<{ received: number }>(
        'SELECT received_payloads AS received FROM terra_backfills WHERE reference = $1',
        [REFERENCE],
      );
      return (rows[0]?.received ?? 0) >= 1;
    });
    await svc.killWorker();
    for (let n = CHUNKS / 2 + 1; n <= CHUNKS; n++) {
      const res = await deliver(dailyEvent(chunkDays(n), who), { reference: `${REFERENCE}:chunk:${n}` });
      expect(res.status).toBe(200);
    }
    // A chunk Terra sends twice counts once.
    await deliver(dailyEvent(chunkDays(CHUNKS), who), { reference: `${REFERENCE}:chunk:${CHUNKS}` });
    await svc.startWorker();
    await ingested();

    const { rows } = await svc.database.pool.query<{ received: number; expected: number; completed: boolean }>(
      `SELECT received_payloads AS received, expected_payloads AS expected, completed_at IS NOT NULL AS completed
       FROM terra_backfills WHERE reference = $1`,
      [REFERENCE],
    );
    expect(rows).toEqual([{ received: CHUNKS, expected: CHUNKS, completed: true }]);
    const daily = await dailyOf(alice.userId);
    const all = Array.from({ length: CHUNKS }, (_, i) => chunkDays(i + 1)).flat();
    for (const d of all) expect(daily.filter((r) => r.date === d.date).map((r) => r.steps)).toEqual([d.steps]);

    const reported = await until(async () => {
      const seen = hooks('data.updated').filter((e) => e.data.backfill_reference === REFERENCE);
      return seen.length > 0 && seen;
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(hooks('data.updated').filter((e) => e.data.backfill_reference === REFERENCE)).toHaveLength(1);
    expect(reported[0].data).toMatchObject({
      tables: ['daily_summaries'],
      from: all[0].date,
      to: all[all.length - 1].date,
    });
  });
  test('chunks that arrive before the announcement still count, and the backfill completes when it comes', async () => {
    const reference = 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f';
    const who = { terraUser: GARMIN_USER, provider: 'GARMIN', reference: alice.userId };
    await deliver(dailyEvent([{ date: day(700), steps: 700 }], who), { reference: `${reference}:chunk:1` });
    await deliver(dailyEvent([{ date: day(701), steps: 701 }], who), { reference: `${reference}:chunk:2` });
    await ingested();
    const sending = terraExample('large_request_sending') as { user: Terra.TerraUser };
    await deliver(
      {
        ...sending,
        reference,
        expected_payloads: 2,
        user: asTerraUser(sending.user, GARMIN_USER, 'GARMIN', alice.userId),
      },
      { reference },
    );
    await ingested();
    const { rows } = await svc.database.pool.query<{ received: number; completed: boolean }>(
      `SELECT received_payloads AS received, completed_at IS NOT NULL AS completed FROM terra_backfills
       WHERE reference = $1`,
      [reference],
    );
    expect(rows).toEqual([{ received: 2, completed: true }]);
    const reported = await until(async () =>
      hooks('data.updated').find((e) => e.data.backfill_reference === reference),
    );
    expect(reported.data).toMatchObject({ from: day(701), to: day(700) });
  });
});

describe('replay and erasure', () => {
  test('npm run terra:replay runs a user’s stored events again and changes nothing that was right', async () => {
    const before = await dailyOf(alice.userId);
    const backfills = (await svc.database.pool.query('SELECT * FROM terra_backfills')).rows;
    const replay = await runCli('scripts/terra-replay.ts', ['--user', 'terra-alice', '--since', '2000-01-01'], {
      DATABASE_URL: svc.database.url,
    });
    expect(replay).toMatchObject({ code: 0, stderr: '' });
    expect(replay.stdout).toMatch(/^Replaying \d+ Terra event\(s\) of usr_/);
    expect(replay.stdout).not.toMatch(/9000|12345/);
    expect(await dailyOf(alice.userId)).toEqual(before);
    expect((await svc.database.pool.query('SELECT * FROM terra_backfills')).rows).toEqual(backfills);
    const unknown = await runCli('scripts/terra-replay.ts', ['--user', 'nobody', '--since', '2000-01-01'], {
      DATABASE_URL: svc.database.url,
    });
    expect(unknown).toMatchObject({ code: 2, stderr: 'error: no user nobody\n' });
  });

  test('deleting the account erases its Terra events, connections and what its providers sent', async () => {
    const res = await api(svc.url, 'DELETE', '/v1/account', { key: alice.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.erased.terra_events).toBeGreaterThan(10);
    for (const table of ['terra_events', 'terra_connections', 'terra_contributions', 'terra_backfills']) {
      const { rows } = await svc.database.pool.query(`SELECT 1 FROM ${table} WHERE user_id = $1`, [alice.userId]);
      expect({ table, rows: rows.length }).toEqual({ table, rows: 0 });
    }
  });
});
