/**
 * OpenTelemetry traces, set up once per process from the standard environment: off unless an OTLP
 * endpoint (or `OTEL_TRACES_EXPORTER`) asks for them, and then sent over OTLP/HTTP in batches. Off,
 * nothing is registered: the API's no-op tracer answers, and ./spans.ts's helpers only call through.
 *
 * Every span leaves this process through one processor (`ContentSafeSpanProcessor`) that keeps health
 * data out whoever made the span: the SDK's own instrumentation, Temporal's interceptors (which record
 * an error's message and stack) and the workflow spans that come back from the workflow sandbox
 * (./temporal/tracing.ts). It keeps an error's class and drops its message, keeps attributes only when
 * they are plain values, and puts the turn id on every span of a turn (`amy.turn_id`).
 */
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { envDetectorSync, Resource, type IResource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { isTurnId } from '../contracts/ids';
import { ConfigError } from './config';
import type { Logger } from './logger';
import { ATTR_TURN_ID, setRecording } from './spans';

type TracesExporter = 'otlp' | 'console';

export interface TracingConfig {
  /** Where spans go; empty: tracing is off. */
  exporters: TracesExporter[];
  serviceName: string;
  /** AMY_OTEL_CAPTURE_CONTENT: model calls' messages and answers on their spans (health data!). */
  captureContent: boolean;
}

const EXPORTERS = ['otlp', 'console', 'none'] as const;

/** `service.name` as OTEL_RESOURCE_ATTRIBUTES gives it (`key=value,…`, values percent-encoded), if it does. */
function serviceNameInResourceAttributes(value: string | undefined): string | undefined {
  for (const pair of (value ?? '').split(',')) {
    const [key, ...rest] = pair.split('=');
    if (key?.trim() === ATTR_SERVICE_NAME && rest.length > 0) return decodeURIComponent(rest.join('=').trim());
  }
  return undefined;
}

/**
 * What the environment asks for. Off by default: spans go somewhere only when an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`) or `OTEL_TRACES_EXPORTER`
 * names an exporter; `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` turn them off whatever else
 * is set. Sampling (`OTEL_TRACES_SAMPLER`, `…_ARG`), the OTLP headers, timeout and compression, and the
 * batching (`OTEL_BSP_*`) are read by the OpenTelemetry SDK itself.
 */
export function readTracingConfig(env: NodeJS.ProcessEnv, defaultServiceName: string): TracingConfig {
  const capture = env.AMY_OTEL_CAPTURE_CONTENT?.trim().toLowerCase() || 'false';
  if (capture !== 'true' && capture !== 'false') {
    throw new ConfigError(`AMY_OTEL_CAPTURE_CONTENT must be true or false, not "${env.AMY_OTEL_CAPTURE_CONTENT}"`);
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol === 'grpc') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: the service sends OTLP over HTTP (port 4318 of a collector)',
    );
  }
  const named = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const unknown = named.filter((name) => !(EXPORTERS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new ConfigError(`OTEL_TRACES_EXPORTER: ${unknown.join(', ')} is not one of ${EXPORTERS.join(', ')}`);
  }
  const endpoint = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
  let exporters: TracesExporter[] =
    named.length > 0 ? [...new Set(named.filter((name): name is TracesExporter => name !== 'none'))] : [];
  if (named.length === 0 && endpoint) exporters = ['otlp'];
  if (named.includes('none') || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') exporters = [];
  const serviceName =
    env.OTEL_SERVICE_NAME?.trim() ||
    serviceNameInResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES) ||
    defaultServiceName;
  return { exporters, serviceName, captureContent: capture === 'true' };
}

/** Attribute values OpenTelemetry allows: a primitive, or an array of one kind of primitive. */
function isAttributeValue(value: unknown): boolean {
  const primitive = (v: unknown) => v === null || v === undefined || ['string', 'number', 'boolean'].includes(typeof v);
  return Array.isArray(value) ? value.every(primitive) : value !== null && value !== undefined && primitive(value);
}

/** The turn a span belongs to: its own attribute, or the Temporal workflow it is about when that is a turn's. */
function turnIdOf(attributes: Attributes): string | undefined {
  const own = attributes[ATTR_TURN_ID];
  if (typeof own === 'string') return own;
  const workflowId = attributes.temporalWorkflowId;
  return typeof workflowId === 'string' && isTurnId(workflowId) ? workflowId : undefined;
}

/** An `exception` event keeps the error's class; its message and stack can quote anything. */
const EXCEPTION_KEPT = new Set(['exception.type']);

/** The span as it may leave the process: see the module comment. */
function contentSafe(span: ReadableSpan): ReadableSpan {
  const attributes: Attributes = {};
  for (const [key, value] of Object.entries(span.attributes)) if (isAttributeValue(value)) attributes[key] = value;
  const turnId = turnIdOf(span.attributes);
  if (turnId) attributes[ATTR_TURN_ID] = turnId;
  const events = span.events.map((event) =>
    event.name === 'exception'
      ? {
          ...event,
          attributes: Object.fromEntries(
            Object.entries(event.attributes ?? {}).filter(([key]) => EXCEPTION_KEPT.has(key)),
          ),
        }
      : event,
  );
  const thrown = events.find((event) => event.name === 'exception')?.attributes?.['exception.type'];
  if (span.status.code === SpanStatusCode.ERROR && attributes[ATTR_ERROR_TYPE] === undefined) {
    attributes[ATTR_ERROR_TYPE] = typeof thrown === 'string' ? thrown : '_OTHER';
  }
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    status: { code: span.status.code },
    attributes,
    links: span.links,
    events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/**
 * The one way out of the process for a span (see the module comment). A span started under one of
 * this process's spans of a turn (a model call under an activity, a workflow start under the API
 * request) takes the turn id from it as it starts.
 */
class ContentSafeSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    const parent = trace.getSpan(parentContext) as Partial<ReadableSpan> | undefined;
    const turnId = parent?.attributes && turnIdOf(parent.attributes);
    if (turnId) span.setAttribute(ATTR_TURN_ID, turnId);
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(contentSafe(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** Where this process's spans go while tracing is on: the workflow sandbox's spans are handed here too. */
let pipeline: { processor: SpanProcessor; resource: IResource } | null = null;

export const activeSpanPipeline = () => pipeline;

export interface Tracing {
  readonly enabled: boolean;
  readonly serviceName: string;
  /** Sends what is still batched and stops tracing (before the process exits). */
  shutdown(): Promise<void>;
}

function processorsFor(config: TracingConfig, exporter: SpanExporter | undefined): SpanProcessor[] {
  if (exporter) return [new SimpleSpanProcessor(exporter)];
  return config.exporters.map((name) =>
    name === 'otlp'
      ? new BatchSpanProcessor(new OTLPTraceExporter())
      : new SimpleSpanProcessor(new ConsoleSpanExporter()),
  );
}

/** One processor that hands each span to all of `processors`. */
function fanOut(processors: SpanProcessor[]): SpanProcessor {
  if (processors.length === 1) return processors[0]!;
  return {
    onStart: (span, ctx) => processors.forEach((p) => p.onStart(span, ctx)),
    onEnd: (span) => processors.forEach((p) => p.onEnd(span)),
    forceFlush: async () => void (await Promise.all(processors.map((p) => p.forceFlush()))),
    shutdown: async () => void (await Promise.all(processors.map((p) => p.shutdown()))),
  };
}

/**
 * Sets up this process's tracing from `env` (see readTracingConfig), under `defaultServiceName`
 * (`amy-api`, `amy-worker`) unless OTEL_SERVICE_NAME names it. `exporter` (a test's in-memory one)
 * turns tracing on whatever the environment says, and gets each span as it ends. The exporter's own
 * failures (a collector that is down) are logged as warnings through `logger`.
 */
export function startTracing(opts: {
  defaultServiceName: string;
  env?: NodeJS.ProcessEnv;
  exporter?: SpanExporter;
  logger?: Pick<Logger, 'warn'>;
}): Tracing {
  const config = readTracingConfig(opts.env ?? process.env, opts.defaultServiceName);
  const processors = processorsFor(config, opts.exporter);
  if (processors.length === 0) return { enabled: false, serviceName: config.serviceName, shutdown: async () => {} };
  if (opts.logger) {
    const { logger } = opts;
    const warn = (message: string) => logger.warn('opentelemetry: ' + message);
    diag.setLogger({ error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  }
  const resource = Resource.default()
    .merge(envDetectorSync.detect())
    .merge(new Resource({ [ATTR_SERVICE_NAME]: config.serviceName }));
  const processor = new ContentSafeSpanProcessor(fanOut(processors));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // The W3C trace context (and baggage) propagators, and an AsyncLocalStorage context manager.
  provider.register();
  pipeline = { processor, resource };
  setRecording({ captureContent: config.captureContent });
  return {
    enabled: true,
    serviceName: config.serviceName,
    async shutdown() {
      setRecording(null);
      pipeline = null;
      await provider.shutdown();
      // So that a test can set tracing up again in the same process.
      trace.disable();
      context.disable();
      propagation.disable();
      if (opts.logger) diag.disable();
    },
  };
}
