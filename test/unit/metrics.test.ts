/**
 * The metrics module (platform/metrics.ts), its endpoint (platform/metrics-endpoint.ts) and Temporal's
 * metrics on it (worker/temporal-metrics.ts), read back as a scraper reads them. The service's metrics are
 * one set per process, so each check reads how much a series moved rather than its value.
 */
import type { BufferedMetricUpdate } from '@temporalio/worker';
import { Registry } from 'prom-client';
import { metrics, processRegistry } from '../../platform/metrics';
import { startMetricsEndpoint, type MetricsEndpoint } from '../../platform/metrics-endpoint';
import { TemporalMetrics } from '../../worker/temporal-metrics';
import { parsePrometheusText, total } from '../support/prometheus';

const read = async (registry: Registry = processRegistry()) => parsePrometheusText(await registry.metrics());

/** How much `name` (with `labels`) moves while `act` runs. */
async function moved(name: string, labels: Record<string, string>, act: () => Promise<unknown> | void) {
  const before = total(await read(), name, labels);
  await act();
  return total(await read(), name, labels) - before;
}

describe('the service’s metrics', () => {
  const never = new AbortController().signal;

  test('a step attempt is timed by outcome, and an attempt after the first is a retry', async () => {
    const count = 'amy_step_attempt_duration_seconds_count';
    expect(
      await moved(count, { step: 'ds_plan', outcome: 'ok' }, () =>
        metrics.timeStepAttempt('ds_plan', 1, never, async () => 1),
      ),
    ).toBe(1);
    expect(
      await moved('amy_step_retries_total', { step: 'ds_plan' }, () =>
        metrics.timeStepAttempt('ds_plan', 1, never, async () => 1),
      ),
    ).toBe(0);

    const failing = () => metrics.timeStepAttempt('ds_plan', 2, never, async () => Promise.reject(new Error('boom')));
    expect(await moved(count, { step: 'ds_plan', outcome: 'error' }, () => failing().catch(() => undefined))).toBe(1);
    expect(await moved('amy_step_retries_total', { step: 'ds_plan' }, () => failing().catch(() => undefined))).toBe(1);

    const cancelled = new AbortController();
    cancelled.abort();
    await expect(
      moved(count, { step: 'ds_plan', outcome: 'cancelled' }, () =>
        metrics
          .timeStepAttempt('ds_plan', 1, cancelled.signal, async () => Promise.reject(new Error('aborted')))
          .catch(() => undefined),
      ),
    ).resolves.toBe(1);
    // The attempt's own result and error pass through untouched.
    await expect(metrics.timeStepAttempt('ds_plan', 1, never, async () => 'result')).resolves.toBe('result');
    await expect(
      metrics.timeStepAttempt('ds_plan', 1, never, async () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
  });

  test('a failed turn is counted with its error code, a completed one without', async () => {
    const name = 'amy_turns_ended_total';
    expect(
      await moved(name, { status: 'failed', path: 'unknown', code: 'turn_abandoned' }, () =>
        metrics.turnEnded({ status: 'failed', path: 'unknown', code: 'turn_abandoned' }),
      ),
    ).toBe(1);
    const samples = await read();
    metrics.turnEnded({ status: 'completed', path: 'health_coach', code: 'ignored' });
    const after = await read();
    expect(
      total(after, name, { status: 'completed', path: 'health_coach' }) -
        total(samples, name, { status: 'completed', path: 'health_coach' }),
    ).toBe(1);
    expect(
      after.filter((s) => s.name === name && s.labels.status === 'completed').every((s) => !('code' in s.labels)),
    ).toBe(true);
  });

  test('a model call counts its call, tokens, cost and duration by model and call id', async () => {
    const call = { model: 'claude-test', step: 'synthesis' as const };
    const record = () =>
      metrics.modelCallEnded({
        ...call,
        outcome: 'success',
        inputTokens: 120,
        outputTokens: 30,
        costUsd: 0.0025,
        durationMs: 1500,
      });
    const before = await read();
    record();
    const after = await read();
    const delta = (name: string, labels: Record<string, string>) =>
      total(after, name, labels) - total(before, name, labels);
    expect(delta('amy_model_calls_total', { ...call, outcome: 'success' })).toBe(1);
    expect(delta('amy_model_tokens_total', { ...call, token_type: 'input' })).toBe(120);
    expect(delta('amy_model_tokens_total', { ...call, token_type: 'output' })).toBe(30);
    expect(delta('amy_model_cost_usd_total', call)).toBeCloseTo(0.0025, 12);
    expect(delta('amy_model_call_duration_seconds_sum', call)).toBeCloseTo(1.5, 9);
  });

  test('an open event stream is counted until it closes, once however often its close is reported', async () => {
    const open = async () => total(await read(), 'amy_sse_streams_open');
    const before = await open();
    const closed = metrics.sseStreamOpened();
    expect(await open()).toBe(before + 1);
    closed();
    closed();
    expect(await open()).toBe(before);
  });

  test('a memory entry left out as a credential is counted by its kind', async () => {
    const name = 'amy_memory_entries_withheld_total';
    expect(await moved(name, { kind: 'card_number' }, () => metrics.memoryEntryWithheld('card_number'))).toBe(1);
    expect(await moved(name, { kind: 'password' }, () => metrics.memoryEntryWithheld('card_number'))).toBe(0);
  });

  test('the process registry is one, with Node’s own metrics', async () => {
    expect(processRegistry()).toBe(processRegistry());
    const samples = await read();
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(samples.some((s) => s.name === 'nodejs_heap_size_used_bytes')).toBe(true);
  });
});

describe('the metrics endpoint', () => {
  let endpoint: MetricsEndpoint;
  const registry = new Registry();
  let scrapes = 0;
  beforeAll(async () => {
    endpoint = await startMetricsEndpoint({
      host: '127.0.0.1',
      port: 0,
      registry,
      logger: { info() {}, warn() {} },
      beforeScrape: () => void scrapes++,
    });
  });
  afterAll(() => endpoint.close());

  test('serves GET /metrics in the text format, brought up to date first', async () => {
    const res = await fetch(endpoint.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
    expect(scrapes).toBe(1);
  });

  test('answers anything else with a 404', async () => {
    expect((await fetch(endpoint.url.replace('/metrics', '/'))).status).toBe(404);
    expect((await fetch(endpoint.url.replace('/metrics', '/v1/turns'))).status).toBe(404);
    expect((await fetch(endpoint.url, { method: 'POST' })).status).toBe(404);
  });
});

describe('Temporal’s metrics on the worker’s registry', () => {
  const metric = (name: string, kind: BufferedMetricUpdate['metric']['kind'], description = '') =>
    ({
      name,
      kind,
      valueType: kind === 'counter' ? 'int' : 'float',
      unit: '',
      description,
    }) as BufferedMetricUpdate['metric'];
  const request = metric('temporal_request', 'counter', 'Count of client request successes by rpc name');
  const latency = metric(
    'temporal_activity_execution_latency',
    'histogram',
    'Histogram of activity execution latencies',
  );
  const slots = metric('temporal_worker_task_slots_available', 'gauge');
  const inFlight = metric('temporal_custom_in_flight', 'up-down-counter');

  test('each kind of update lands as Core’s own exporter would serve it, whatever the label set', async () => {
    const temporal = new TemporalMetrics();
    const registry = new Registry();
    // An update before the registry serves them is kept, and served with the rest.
    temporal.record({ metric: request, value: 1, attributes: { operation: 'GetSystemInfo', service_name: 'core' } });
    const stop = temporal.serveFrom(registry);
    try {
      const queue = { namespace: 'default', task_queue: 'q', service_name: 'core' };
      temporal.record({
        metric: request,
        value: 2,
        attributes: { ...queue, operation: 'RespondActivityTaskCompleted' },
      });
      temporal.record({
        metric: request,
        value: 3,
        attributes: { ...queue, operation: 'RespondActivityTaskCompleted' },
      });
      temporal.record({
        metric: latency,
        value: 0.3,
        attributes: { ...queue, activity_type: 'startTurn', eager: true },
      });
      temporal.record({ metric: slots, value: 40, attributes: { ...queue, worker_type: 'ActivityWorker' } });
      temporal.record({ metric: slots, value: 38, attributes: { ...queue, worker_type: 'ActivityWorker' } });
      temporal.record({ metric: inFlight, value: 3, attributes: queue });
      temporal.record({ metric: inFlight, value: -1, attributes: queue });

      const text = await registry.metrics();
      const samples = parsePrometheusText(text);
      expect(text).toContain('# HELP temporal_request Count of client request successes by rpc name');
      expect(text).toContain('# TYPE temporal_request counter');
      expect(text).toContain('# TYPE temporal_activity_execution_latency histogram');
      expect(total(samples, 'temporal_request', { operation: 'GetSystemInfo' })).toBe(1);
      expect(samples.find((s) => s.labels.operation === 'GetSystemInfo')?.labels).toEqual({
        operation: 'GetSystemInfo',
        service_name: 'core',
      });
      expect(
        total(samples, 'temporal_request', { operation: 'RespondActivityTaskCompleted', namespace: 'default' }),
      ).toBe(5);
      const latencyLabels = { activity_type: 'startTurn', eager: 'true' };
      expect(total(samples, 'temporal_activity_execution_latency_count', latencyLabels)).toBe(1);
      // Core's buckets for this histogram, in seconds: 0.05, 0.1, 0.5, 1, 5, 10, 60.
      const buckets = samples
        .filter((s) => s.name === 'temporal_activity_execution_latency_bucket')
        .map((s) => [s.labels.le, s.value]);
      expect(buckets).toEqual([
        ['0.05', 0],
        ['0.1', 0],
        ['0.5', 1],
        ['1', 1],
        ['5', 1],
        ['10', 1],
        ['60', 1],
        ['+Inf', 1],
      ]);
      expect(total(samples, 'temporal_worker_task_slots_available')).toBe(38);
      expect(total(samples, 'temporal_custom_in_flight')).toBe(2);
    } finally {
      stop();
    }
  });
});
