/**
 * Metrics, scraped as Prometheus scrapes them: the API and the worker run as real processes, each with
 * its own `/metrics` listener (AMY_METRICS_PORT), and serve real turns (a question about the user's data,
 * so the sandbox and the gates run, and a conversational one whose routing is retried once). The worker's
 * counters agree with what the turns did (the ledger row by row for model calls, tokens and cost), its
 * one endpoint carries Temporal's own worker metrics, the API's open event streams are counted while
 * they are open, its requests by route template and status and its refusals by error code, and no label
 * anywhere carries an id, a key or what the user asked.
 */
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../dev/stack/ports';
import { seedDemoHealthData } from '../../dev/synthetic-data/demo-user';
import { newId } from '../../platform/ids';
import { endTurn, turnAbandoned } from '../../platform/turn-ending';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api } from '../support/http';
import { has, scrape, total, type Sample } from '../support/prometheus';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(240_000);

// A trend: its finding is reproduced and judged by the seven gates (a description would only be reproduced).
const DATA_QUESTION = 'Has my resting heart rate changed over the last 30 days?';
const THANKS = 'thanks a lot, that was really helpful!';

let svc: TestService;
let worker: ChildProcess | null = null;
let apiProcess: ApiProcess | null = null;
let workerMetrics: string;
let apiMetrics: string;
let user: { userId: string; apiKey: string };
const turnIds: string[] = [];
/** Other users' ids and keys, which no label may carry either. */
const otherSecrets: string[] = [];

async function ask(content: string): Promise<string> {
  const created = await api(apiProcess!.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }] },
  });
  expect(created.status).toBe(201);
  const turnId: string = created.body.id;
  turnIds.push(turnId);
  await svc.temporal.workflow.getHandle(turnId).result();
  return turnId;
}

beforeAll(async () => {
  svc = await startTestService();
  await svc.stopWorker(); // this suite's worker is a process of its own, with its own metrics
  const [apiPort, apiMetricsPort, workerMetricsPort] = [await freePort(), await freePort(), await freePort()];
  worker = await spawnWorkerProcess(svc.config, { env: { AMY_METRICS_PORT: String(workerMetricsPort) } });
  apiProcess = await spawnApiProcess(svc.config, apiPort, { env: { AMY_METRICS_PORT: String(apiMetricsPort) } });
  workerMetrics = `http://127.0.0.1:${workerMetricsPort}/metrics`;
  apiMetrics = `http://127.0.0.1:${apiMetricsPort}/metrics`;
  user = await svc.createUser();
  await seedDemoHealthData(svc.database.pool, user.userId);
  await ask(DATA_QUESTION);
  // Routing answers 529 once: its activity is retried, and the retry is counted.
  svc.scripted.faults.inject({ kind: 'overloaded', step: 'route', times: 1 });
  await ask(THANKS);
});

afterAll(async () => {
  await apiProcess?.stop();
  if (worker) await killHard(worker);
  await svc?.close();
});

describe('the worker’s /metrics after a data turn and a conversational turn', () => {
  let samples: Sample[];
  beforeAll(async () => {
    samples = await scrape(workerMetrics);
  });

  test('counts each turn started, and each ended by status and path', () => {
    expect(total(samples, 'amy_turns_started_total')).toBe(2);
    expect(total(samples, 'amy_turns_ended_total', { status: 'completed', path: 'data_science' })).toBe(1);
    expect(total(samples, 'amy_turns_ended_total', { status: 'completed', path: 'conversation' })).toBe(1);
    expect(total(samples, 'amy_turns_ended_total')).toBe(2);
  });

  test('times every attempt of the steps the turns ran, and counts the retry', () => {
    const attempts = (step: string, outcome: string) =>
      total(samples, 'amy_step_attempt_duration_seconds_count', { step, outcome });
    expect(attempts('classify_vagueness', 'ok')).toBe(2);
    // The conversational turn's routing failed once and was retried.
    expect(attempts('route', 'ok')).toBe(2);
    expect(attempts('route', 'error')).toBe(1);
    expect(total(samples, 'amy_step_retries_total', { step: 'route' })).toBe(1);
    expect(total(samples, 'amy_step_retries_total')).toBe(1);
    expect(attempts('fallback_reply', 'ok')).toBe(1);
    for (const step of ['ds_plan', 'ds_summary', 'gates', 'synthesis']) expect(attempts(step, 'ok')).toBeGreaterThan(0);
    expect(total(samples, 'amy_step_attempt_duration_seconds_sum', { step: 'synthesis' })).toBeGreaterThan(0);
  });

  test('model calls, tokens and cost by model and call id are the ledger’s', async () => {
    const { rows } = await svc.database.pool.query<{
      model: string;
      step: string;
      outcome: string;
      calls: number;
      input_tokens: number;
      output_tokens: number;
      cost_usd: string;
    }>(
      `SELECT model, step, outcome, count(*)::int AS calls, sum(input_tokens)::int AS input_tokens,
         sum(output_tokens)::int AS output_tokens, sum(cost_usd)::text AS cost_usd
       FROM llm_calls GROUP BY model, step, outcome`,
    );
    expect(rows.map((r) => r.step)).toEqual(expect.arrayContaining(['route', 'ds_plan', 'synthesis']));
    expect(rows.find((r) => r.step === 'route' && r.outcome === 'overloaded')?.calls).toBe(1);
    for (const row of rows) {
      const series = { model: row.model, step: row.step };
      expect(total(samples, 'amy_model_calls_total', { ...series, outcome: row.outcome })).toBe(row.calls);
    }
    const byCall = new Map<string, (typeof rows)[number][]>();
    for (const row of rows)
      byCall.set(`${row.model} ${row.step}`, [...(byCall.get(`${row.model} ${row.step}`) ?? []), row]);
    for (const [key, callRows] of byCall) {
      const [model, step] = key.split(' ');
      const sum = (f: (r: (typeof rows)[number]) => number) => callRows.reduce((s, r) => s + f(r), 0);
      expect(total(samples, 'amy_model_tokens_total', { model, step, token_type: 'input' })).toBe(
        sum((r) => r.input_tokens),
      );
      expect(total(samples, 'amy_model_tokens_total', { model, step, token_type: 'output' })).toBe(
        sum((r) => r.output_tokens),
      );
      expect(total(samples, 'amy_model_cost_usd_total', { model, step })).toBeCloseTo(
        sum((r) => Number(r.cost_usd)),
        9,
      );
      expect(total(samples, 'amy_model_call_duration_seconds_count', { model, step })).toBe(sum((r) => r.calls));
    }
    expect(total(samples, 'amy_model_calls_total')).toBe(rows.reduce((s, r) => s + r.calls, 0));
    expect(total(samples, 'amy_model_tokens_total', { token_type: 'output' })).toBeGreaterThan(0);
    expect(total(samples, 'amy_model_cost_usd_total')).toBeGreaterThan(0);
  });

  test('times event appends, sandbox runs with their outcome, and gates requests', () => {
    expect(total(samples, 'amy_event_append_duration_seconds_count')).toBeGreaterThan(10);
    expect(
      total(samples, 'amy_sandbox_run_duration_seconds_count', { operation: 'run', outcome: 'ok' }),
    ).toBeGreaterThan(0);
    for (const operation of ['series', 'gates']) {
      expect(total(samples, 'amy_gates_request_duration_seconds_count', { operation, outcome: 'ok' })).toBeGreaterThan(
        0,
      );
    }
  });

  test('carries Temporal’s own worker metrics and Node’s process metrics on the same endpoint', () => {
    const queue = { task_queue: svc.config.TEMPORAL_TASK_QUEUE };
    expect(total(samples, 'temporal_workflow_completed', { ...queue, workflow_type: 'TurnWorkflow' })).toBe(2);
    // classifyVagueness: a full activity both turns run once (startTurn runs as a local activity, and route
    // is made to fail once above).
    expect(
      total(samples, 'temporal_activity_execution_latency_count', { ...queue, activity_type: 'classifyVagueness' }),
    ).toBe(2);
    expect(has(samples, 'temporal_worker_task_slots_available', queue)).toBe(true);
    expect(has(samples, 'temporal_num_pollers', queue)).toBe(true);
    expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(has(samples, 'nodejs_eventloop_lag_seconds')).toBe(true);
  });
});

/** A running turn with no workflow behind it: its stream stays open until the test ends the turn. */
async function insertRunningTurn(userId = user.userId): Promise<string> {
  const turnId = newId('turn');
  turnIds.push(turnId);
  await svc.database.pool.query(
    `INSERT INTO turns (id, user_id, status, messages, context, started_at) VALUES ($1, $2, 'running', $3, $4, now())`,
    [turnId, userId, JSON.stringify([{ role: 'user', content: 'hi' }]), JSON.stringify({})],
  );
  return turnId;
}

describe('the API’s /metrics', () => {
  const openStreams = async () => total(await scrape(apiMetrics), 'amy_sse_streams_open');

  /** Scrapes until the gauge reads `value`: a stream's close reaches the server a moment after the client's. */
  async function streamsBecome(value: number): Promise<number> {
    let read = await openStreams();
    for (const deadline = Date.now() + 15_000; read !== value && Date.now() < deadline; read = await openStreams()) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return read;
  }

  test('counts an open event stream until the client leaves it', async () => {
    expect(await openStreams()).toBe(0);
    const turnId = await insertRunningTurn();
    const stream = openEventStream(`${apiProcess!.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
    await stream.responseHeaders;
    expect(await openStreams()).toBe(1);
    stream.close();
    expect(await streamsBecome(0)).toBe(0);
  });

  test('counts an open event stream until the turn’s end closes it', async () => {
    const turnId = await insertRunningTurn();
    const stream = openEventStream(`${apiProcess!.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });
    await stream.responseHeaders;
    expect(await openStreams()).toBe(1);
    await endTurn(
      svc.database.pool,
      turnId,
      { status: 'failed', error: turnAbandoned('ended by the test') },
      new Date(),
    );
    await stream.closedByServer;
    expect(await streamsBecome(0)).toBe(0);
  });

  test('serves Node’s process metrics; the public port has no /metrics', async () => {
    const samples = await scrape(apiMetrics);
    expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    const onPublicPort = await fetch(`${apiProcess!.url}/metrics`);
    expect(onPublicPort.status).toBe(404);
    expect(await onPublicPort.text()).not.toContain('amy_');
    expect((await fetch(apiMetrics.replace('/metrics', '/other'))).status).toBe(404);
  });
});

describe('the API’s requests and refusals', () => {
  /** What the API's scrape moved by while `act` ran, series by series. */
  async function measure(act: () => Promise<unknown>) {
    const before = await scrape(apiMetrics);
    await act();
    const after = await scrape(apiMetrics);
    return {
      after,
      moved: (name: string, labels: Record<string, string> = {}) =>
        total(after, name, labels) - total(before, name, labels),
    };
  }

  const requests = 'amy_http_requests_total';
  const durations = 'amy_http_request_duration_seconds_count';
  const turnRoute = '/v1/turns/:id';

  test('counts the turns created, by method, route template and status', async () => {
    const samples = await scrape(apiMetrics);
    expect(total(samples, requests, { method: 'POST', route: '/v1/turns', status: '201' })).toBe(2);
    expect(total(samples, durations, { method: 'POST', route: '/v1/turns' })).toBeGreaterThanOrEqual(2);
  });

  test('labels a request by its route’s template: a 404 with an id in its path, a 401 refused before routing', async () => {
    const unknownTurn = newId('turn');
    const { moved, after } = await measure(async () => {
      expect((await api(apiProcess!.url, 'GET', `/v1/turns/${turnIds[0]}`, { key: user.apiKey })).status).toBe(200);
      const missing = await api(apiProcess!.url, 'GET', `/v1/turns/${unknownTurn}`, { key: user.apiKey });
      expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
      const keyless = await api(apiProcess!.url, 'GET', `/v1/turns/${unknownTurn}`);
      expect([keyless.status, keyless.body.error.code]).toEqual([401, 'authentication_required']);
      const noRoute = await api(apiProcess!.url, 'GET', `/v1/no-such-route/${unknownTurn}`, { key: user.apiKey });
      expect(noRoute.status).toBe(404);
    });
    expect(moved(requests, { method: 'GET', route: turnRoute, status: '200' })).toBe(1);
    expect(moved(requests, { method: 'GET', route: turnRoute, status: '404' })).toBe(1);
    expect(moved(requests, { method: 'GET', route: turnRoute, status: '401' })).toBe(1);
    expect(moved(durations, { method: 'GET', route: turnRoute })).toBe(3);
    expect(moved(requests, { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(moved(durations, { method: 'GET', route: 'unmatched' })).toBe(1);
    expect(moved(requests)).toBe(4);
    expect(moved('amy_api_errors_total', { code: 'not_found' })).toBe(2);
    expect(moved('amy_api_errors_total', { code: 'authentication_required' })).toBe(1);
    expect(moved('amy_api_errors_total')).toBe(3);
    const routes = after.filter((s) => s.name.startsWith('amy_http_')).map((s) => s.labels.route);
    expect(routes.filter((route) => route.includes(unknownTurn) || route.includes(turnIds[0]))).toEqual([]);
  });

  test('counts a refused turn by its error code', async () => {
    const limited = await svc.createUser();
    otherSecrets.push(limited.userId, limited.apiKey);
    for (let i = 0; i < svc.config.AMY_MAX_INFLIGHT_TURNS; i++) await insertRunningTurn(limited.userId);
    const { moved } = await measure(async () => {
      const refused = await api(apiProcess!.url, 'POST', '/v1/turns', {
        key: limited.apiKey,
        body: { messages: [{ role: 'user', content: THANKS }] },
      });
      expect([refused.status, refused.body.error.code]).toEqual([429, 'concurrency_limit_exceeded']);
    });
    expect(moved('amy_api_errors_total', { code: 'concurrency_limit_exceeded' })).toBe(1);
    expect(moved('amy_api_errors_total')).toBe(1);
    expect(moved(requests, { method: 'POST', route: '/v1/turns', status: '429' })).toBe(1);
    expect(moved(requests)).toBe(1);
  });

  test('counts event stream requests by outcome, apart from the request metrics', async () => {
    const running = await insertRunningTurn();
    const { moved, after } = await measure(async () => {
      const stream = openEventStream(`${apiProcess!.url}/v1/turns/${running}/events`, { apiKey: user.apiKey });
      await stream.responseHeaders;
      stream.close();
      // Without Accept: text/event-stream, the turn as JSON.
      expect((await api(apiProcess!.url, 'GET', `/v1/turns/${turnIds[0]}/events`, { key: user.apiKey })).status).toBe(
        200,
      );
      // A client that has every event of an ended turn: the stream opens and closes at once.
      const caughtUp = await fetch(`${apiProcess!.url}/v1/turns/${turnIds[0]}/events`, {
        headers: { authorization: `Bearer ${user.apiKey}`, accept: 'text/event-stream', 'last-event-id': '1000000' },
      });
      expect([caughtUp.status, await caughtUp.text()]).toEqual([200, '']);
      const missing = await api(apiProcess!.url, 'GET', `/v1/turns/${newId('turn')}/events`, { key: user.apiKey });
      expect(missing.status).toBe(404);
    });
    expect(moved('amy_sse_requests_total', { outcome: 'opened' })).toBe(1);
    expect(moved('amy_sse_requests_total', { outcome: 'json' })).toBe(1);
    expect(moved('amy_sse_requests_total', { outcome: 'already_ended' })).toBe(1);
    expect(moved('amy_sse_requests_total', { outcome: 'not_found' })).toBe(1);
    expect(moved('amy_api_errors_total', { code: 'not_found' })).toBe(1);
    // Held open for a whole turn, a stream would swamp the latency of every other route: none is in amy_http_*.
    expect(moved(requests)).toBe(0);
    expect(after.filter((s) => s.name.startsWith('amy_http_') && s.labels.route?.includes('events'))).toEqual([]);
  });
});

test('no label of either process carries an id, a key or what the user asked', async () => {
  const labelValues = [...(await scrape(workerMetrics)), ...(await scrape(apiMetrics))].flatMap((s) =>
    Object.values(s.labels),
  );
  expect(labelValues.length).toBeGreaterThan(100);
  const secrets = [
    ...turnIds,
    ...otherSecrets,
    user.userId,
    user.apiKey,
    DATA_QUESTION,
    THANKS,
    'resting heart rate',
    'thanks',
  ];
  for (const value of labelValues) {
    for (const secret of secrets) expect(value).not.toContain(secret);
    // No id of any kind: ours are a prefix and a ULID.
    expect(value).not.toMatch(/[0-9A-HJKMNP-TV-Z]{26}/);
  }
});
