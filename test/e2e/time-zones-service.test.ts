/**
 * The whole service far from UTC: the API and the worker run as real processes in
 * time zones 22 hours apart (Pacific/Kiritimati, UTC+14, and America/Los_Angeles), each on a Postgres
 * session whose TimeZone is a third and a fourth zone, as a server whose default zone is elsewhere
 * would give them (offsets of +05:45, +13:45 and -03:30 among them, so the driver reads instants sent
 * with odd offsets too). A real turn goes through the API; then:
 * - the Turn's created_at and completed_at, and turn.started's `at`, are the instants this process
 *   read on its own clock around them (UTC epoch milliseconds, to within a second);
 * - the event log replays over SSE after completion, in full and ending in turn.completed;
 * - the retention workflow, run by that worker, deletes none of the turn's events inside the replay
 *   window, and all of them once it has passed;
 * - the API refuses the replay (turn_events_expired) once the window has passed, not hours early or late.
 * The two cases swap the processes' zones, so a shift in either direction shows: a completed_at read
 * 22 hours early expires the replay at once and lets retention delete it, one read 22 hours late
 * never expires it. On the schema before timestamptz (plain timestamp columns) both cases fail: the
 * Turn's created_at comes back 8¼ and 21¾ hours off.
 */
import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { freePort } from '../../dev/stack/ports';
import type { Config } from '../../platform/config';
import type { RetentionWorkflow } from '../../workflows';
import { RETENTION_WORKFLOW_ID } from '../../platform/temporal/service-workflows';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

/** Short, so the test can wait it out; long enough that what must happen inside it does on a busy machine. */
const REPLAY_WINDOW_SECONDS = 10;
/** How far apart this process's clock readings and the service's instants may be (same host, ms precision). */
const SLACK_MS = 1000;

interface ZoneCase {
  api: string;
  apiSession: string;
  worker: string;
  workerSession: string;
}

const CASES: ZoneCase[] = [
  {
    api: 'Pacific/Kiritimati',
    apiSession: 'Asia/Kathmandu',
    worker: 'America/Los_Angeles',
    workerSession: 'Pacific/Chatham',
  },
  {
    api: 'America/Los_Angeles',
    apiSession: 'Pacific/Chatham',
    worker: 'Pacific/Kiritimati',
    workerSession: 'America/St_Johns',
  },
];

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
  await svc.stopWorker(); // this suite's worker and API are real processes, in zones of their own
});
afterAll(async () => {
  await svc?.close();
});

/** The database URL with every session of the pool in `zone`, as a server whose default it is would give. */
function inSessionZone(url: string, zone: string): string {
  const farSession = new URL(url);
  farSession.searchParams.set('options', `-c TimeZone=${zone}`);
  return farSession.toString();
}

async function sessionZone(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ zone: string }>('SELECT current_setting($1) AS zone', ['TimeZone'])).rows[0].zone;
  } finally {
    await client.end();
  }
}

/** Minutes east of UTC in `zone` now, by this Node's ICU: an unknown zone would quietly be UTC in a child. */
function offsetMinutes(zone: string, at = new Date()): number {
  const part = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')!.value;
  const match = /GMT([+-])(\d\d):(\d\d)/.exec(part);
  return match ? (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3])) : 0;
}

async function turnEventCount(turnId: string): Promise<number> {
  const res = await svc.database.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM turn_events WHERE turn_id = $1',
    [turnId],
  );
  return res.rows[0].n;
}

/** One run of the retention workflow on the suite's task queue, i.e. in the worker process under test. */
function runRetention(turnId: string, run: string): Promise<number> {
  return svc.temporal.workflow.execute<typeof RetentionWorkflow>('RetentionWorkflow', {
    taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
    workflowId: `${RETENTION_WORKFLOW_ID}-time-zones-${turnId}-${run}`,
    args: [{ olderThanSeconds: REPLAY_WINDOW_SECONDS }],
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe.each(CASES)('API in $api (session $apiSession), worker in $worker (session $workerSession)', (zones) => {
  let worker: ChildProcess | null = null;
  let apiProcess: ApiProcess | null = null;

  beforeAll(async () => {
    const workerConfig: Config = {
      ...svc.config,
      DATABASE_URL: inSessionZone(svc.config.DATABASE_URL, zones.workerSession),
    };
    const apiConfig: Config = {
      ...svc.config,
      DATABASE_URL: inSessionZone(svc.config.DATABASE_URL, zones.apiSession),
      AMY_REPLAY_WINDOW_SECONDS: REPLAY_WINDOW_SECONDS,
    };
    // Far from UTC, from this process, and from each other: otherwise the case proves nothing.
    const offsets = [zones.api, zones.worker, zones.apiSession, zones.workerSession].map((zone) => offsetMinutes(zone));
    expect(new Set([...offsets, -new Date().getTimezoneOffset()]).size).toBe(5);
    expect(await sessionZone(workerConfig.DATABASE_URL)).toBe(zones.workerSession);
    expect(await sessionZone(apiConfig.DATABASE_URL)).toBe(zones.apiSession);

    const port = await freePort();
    [worker, apiProcess] = await Promise.all([
      spawnWorkerProcess(workerConfig, { env: { TZ: zones.worker } }),
      spawnApiProcess(apiConfig, port, { env: { TZ: zones.api } }),
    ]);
  }, 120_000);
  afterAll(async () => {
    if (worker) await killHard(worker);
    if (apiProcess) await killHard(apiProcess.child);
  });

  test('timestamps are the right instants, replay works inside the window, retention deletes nothing early, both expire on time', async () => {
    const url = apiProcess!.url;
    const { apiKey } = await svc.createUser();

    const beforeCreate = Date.now();
    const created = await api(url, 'POST', '/v1/turns', { key: apiKey, body: thanks });
    const afterCreate = Date.now();
    expect(created.status).toBe(201);
    const turnId = created.body.id as string;
    const live = openEventStream(`${url}/v1/turns/${turnId}/events`, { apiKey });
    await live.closedByServer;
    const afterCompletion = Date.now();
    expect(live.events.at(-1)?.type).toBe('turn.completed');

    const turn = await api(url, 'GET', `/v1/turns/${turnId}`, { key: apiKey });
    expect(turn.status).toBe(200);
    expect(turn.body.status).toBe('completed');
    // The wire format is UTC ISO-8601, and each instant is when it happened by this process's clock.
    const createdAt = Date.parse(turn.body.created_at);
    const completedAt = Date.parse(turn.body.completed_at);
    const started = live.events.find((e) => e.type === 'turn.started')!;
    const startedAt = Date.parse(started.data.at as string);
    for (const stamp of [turn.body.created_at, turn.body.completed_at, started.data.at]) {
      expect(stamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(createdAt).toBeGreaterThanOrEqual(beforeCreate - SLACK_MS);
    expect(createdAt).toBeLessThanOrEqual(afterCreate + SLACK_MS);
    expect(startedAt).toBeGreaterThanOrEqual(createdAt);
    expect(completedAt).toBeGreaterThanOrEqual(startedAt);
    expect(completedAt).toBeLessThanOrEqual(afterCompletion + SLACK_MS);
    const logLength = turn.body.last_event_id as number;
    expect(live.events.map((e) => e.id)).toEqual(Array.from({ length: logLength }, (_, i) => i + 1));

    // Inside the window: retention in the worker's zone and session deletes nothing of this turn…
    await runRetention(turnId, 'inside');
    expect(await turnEventCount(turnId)).toBe(logLength);
    // …and the API replays the whole log, ending in turn.completed.
    const replayedAt = Date.now();
    const replay = openEventStream(`${url}/v1/turns/${turnId}/events`, { apiKey });
    await replay.closedByServer;
    expect(replay.connections).toHaveLength(1);
    expect(replay.events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(
      live.events.map(({ id, type, data }) => ({ id, type, data })),
    );
    expect(replay.events.at(-1)?.type).toBe('turn.completed');
    // Both happened inside the window, or the two checks above were not about it.
    expect(Date.now() - completedAt).toBeLessThan(REPLAY_WINDOW_SECONDS * 1000);
    expect(replayedAt).toBeGreaterThanOrEqual(completedAt);

    // Just past the window: the replay is refused and retention deletes the log; the turn stays.
    await sleep(completedAt + REPLAY_WINDOW_SECONDS * 1000 + 1500 - Date.now());
    const expired = await api(url, 'GET', `/v1/turns/${turnId}/events`, {
      key: apiKey,
      headers: { accept: 'text/event-stream' },
    });
    expect(expired.status).toBe(404);
    expect(expired.body.error.code).toBe('turn_events_expired');
    expect(await runRetention(turnId, 'past')).toBeGreaterThanOrEqual(logLength);
    expect(await turnEventCount(turnId)).toBe(0);
    const kept = await api(url, 'GET', `/v1/turns/${turnId}`, { key: apiKey });
    expect(kept.body).toMatchObject({
      status: 'completed',
      created_at: turn.body.created_at,
      completed_at: turn.body.completed_at,
    });
  }, 90_000);
});
