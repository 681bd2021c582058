/**
 * Temporal's own worker metrics (the SDK Core's runtime telemetry: task slots, pollers, schedule-to-start
 * and execution latencies, sticky cache, failed requests…, docs.temporal.io/references/sdk-metrics) on the
 * worker's one `/metrics`, next to the service's.
 *
 * Core hands its metric updates to a `MetricsBuffer` given to `Runtime.install` (run-worker.ts); before
 * each scrape, and every second so the buffer never fills, they are drained into prom-client metrics of
 * the names, labels and bucket boundaries Core's own Prometheus exporter would serve, so Temporal's SDK
 * dashboards read them as they are. Durations are in seconds, like every other metric on the endpoint.
 * No port of Core's own is opened.
 *
 * Core may update one metric with different label sets (`temporal_request` with and without
 * `namespace`), which one prom-client metric cannot hold (its label names are fixed): each Temporal
 * metric is a prom-client metric per label set, served under the one name.
 */
import { MetricsBuffer, type BufferedMetricUpdate } from '@temporalio/worker';
import type { MetricTags } from '@temporalio/common';
import { Counter, Gauge, Histogram, type Metric, type Registry } from 'prom-client';

const PREFIX = 'temporal_';
const DRAIN_EVERY_MS = 1000;

/**
 * Core's default buckets, in seconds, by metric name (sdk-core crates/common/src/telemetry/metrics.rs,
 * `default_buckets_for`); every other histogram gets DEFAULT_BUCKETS.
 */
const BUCKETS: Record<string, number[]> = {
  workflow_endtoend_latency: [0.1, 0.5, 1, 1.5, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 30_600, 86_400],
  workflow_task_execution_latency: [0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
  workflow_task_replay_latency: [0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
  activity_execution_latency: [0.05, 0.1, 0.5, 1, 5, 10, 60],
  workflow_task_schedule_to_start_latency: [0.1, 0.5, 1, 5, 10, 100, 1000],
  activity_schedule_to_start_latency: [0.1, 0.5, 1, 5, 10, 100, 1000],
};
const DEFAULT_BUCKETS = [0.05, 0.1, 0.5, 1, 2.5, 10];

type Series = Counter | Gauge | Histogram;
type Labels = Record<string, string | number>;

/** One Temporal metric: a prom-client metric per label set, read as one by the registry. */
class TemporalMetric {
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly aggregator = 'sum';
  private readonly bySet = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly kind: BufferedMetricUpdate['metric']['kind'],
  ) {
    this.type = kind === 'counter' ? 'counter' : kind === 'histogram' ? 'histogram' : 'gauge';
  }

  record(labelSet: string, labels: Labels, value: number): void {
    let series = this.bySet.get(labelSet);
    if (!series) {
      series = this.create(Object.keys(labels));
      this.bySet.set(labelSet, series);
    }
    if (series instanceof Counter) series.inc(labels, value);
    else if (series instanceof Histogram) series.observe(labels, value);
    // A gauge is set to its value; an up-down counter's update is a delta.
    else if (this.kind === 'gauge') series.set(labels, value);
    else series.inc(labels, value);
  }

  async get() {
    const parts = await Promise.all([...this.bySet.values()].map((series) => series.get()));
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: parts.flatMap((part) => part.values),
    };
  }

  private create(labelNames: string[]): Series {
    const options = { name: this.name, help: this.help, labelNames, registers: [] };
    if (this.type === 'counter') return new Counter(options);
    if (this.type === 'gauge') return new Gauge(options);
    return new Histogram({ ...options, buckets: BUCKETS[this.name.slice(PREFIX.length)] ?? DEFAULT_BUCKETS });
  }
}

export class TemporalMetrics {
  /** For `Runtime.install({ telemetryOptions: { metrics: { buffer } } })`, before any connection exists. */
  readonly buffer = new MetricsBuffer({ maxBufferSize: 100_000, useSecondsForDurations: true });
  private readonly metrics = new Map<string, TemporalMetric>();
  /** Core reuses an update's tags object for the same label set: its labels are worked out once. */
  private readonly labelsOf = new WeakMap<MetricTags, { set: string; labels: Labels }>();
  private registry: Registry | null = null;

  /** Serves Temporal's metrics from `registry` from now on, draining the buffer until the returned stop. */
  serveFrom(registry: Registry): () => void {
    this.registry = registry;
    for (const metric of this.metrics.values()) registry.registerMetric(metric as unknown as Metric);
    const timer = setInterval(() => this.drain(), DRAIN_EVERY_MS).unref();
    return () => clearInterval(timer);
  }

  /** Moves what Core has recorded since the last drain into the metrics. */
  drain(): void {
    for (const update of this.buffer.retrieveUpdates()) this.record(update);
  }

  /** One of Core's updates: a counter's increment, a gauge's value, a histogram's observation. */
  record({ metric, value, attributes }: BufferedMetricUpdate): void {
    const { set, labels } = this.labels(attributes);
    this.metric(metric).record(set, labels, value);
  }

  private metric({ name, description, kind }: BufferedMetricUpdate['metric']): TemporalMetric {
    let metric = this.metrics.get(name);
    if (!metric) {
      metric = new TemporalMetric(name, description || name, kind);
      this.metrics.set(name, metric);
      // The registry takes any object that reads like its own metrics: a name, a type, a help and get().
      this.registry?.registerMetric(metric as unknown as Metric);
    }
    return metric;
  }

  private labels(attributes: MetricTags): { set: string; labels: Labels } {
    let known = this.labelsOf.get(attributes);
    if (!known) {
      const labels: Labels = {};
      for (const [key, value] of Object.entries(attributes)) {
        labels[key] = typeof value === 'boolean' ? String(value) : value;
      }
      known = { set: Object.keys(labels).sort().join(','), labels };
      this.labelsOf.set(attributes, known);
    }
    return known;
  }
}

/** The process's one: Core's Runtime, and so its buffer, is one per process. */
export const temporalMetrics = new TemporalMetrics();
