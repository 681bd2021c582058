/**
 * The workflow side of a turn's trace (platform/temporal/tracing.ts), paid for only by traced workflows.
 *
 * OpenTelemetry's workflow interceptors make a span of the run and of every activity scheduled, and hand
 * each to the worker through a sink, whether or not anything exports them: about 20 ms of worker CPU per
 * knowledge turn (npm run bench, section (g), docs/benchmarks.md). Here they are made only for a workflow
 * whose start carries a trace context, i.e. one started by a client with tracing on (the API with an
 * OTLP endpoint set). Every other workflow passes each call straight on.
 *
 * Replay-safe: the interceptors add headers and spans, never commands, and whether a run is traced is
 * read from its start's headers, which its history holds.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header OpenTelemetry's client interceptor writes the trace context to (`TRACE_HEADER`). */
const TRACE_HEADER = '_tracer-data';

type Method = (this: unknown, input: unknown, next: (input: unknown) => unknown) => unknown;

/**
 * An interceptor with every method the library's `Interceptor` class has, each passing the call to the
 * library's interceptor once `traced()` has one, and straight to `next` otherwise.
 */
function whenTraced<T extends object>(Interceptor: new () => T, traced: () => T | null): T {
  const names = Object.getOwnPropertyNames(Interceptor.prototype).filter((name) => name !== 'constructor');
  return Object.fromEntries(
    names.map((name) => [
      name,
      (input: unknown, next: (input: unknown) => unknown) => {
        const interceptor = traced();
        return interceptor ? (interceptor[name as keyof T] as Method).call(interceptor, input, next) : next(input);
      },
    ]),
  ) as T;
}

export const interceptors = (): WorkflowInterceptors => {
  let otel: {
    inbound: OpenTelemetryInboundInterceptor;
    outbound: OpenTelemetryOutboundInterceptor;
    internals: OpenTelemetryInternalsInterceptor;
  } | null = null;
  const inbound = whenTraced(OpenTelemetryInboundInterceptor, () => otel?.inbound ?? null);
  const execute = inbound.execute.bind(inbound);
  // The run's first call: its headers say whether the client that started it traces.
  inbound.execute = (input, next) => {
    if (input.headers[TRACE_HEADER] !== undefined) {
      otel = {
        inbound: new OpenTelemetryInboundInterceptor(),
        outbound: new OpenTelemetryOutboundInterceptor(),
        internals: new OpenTelemetryInternalsInterceptor(),
      };
    }
    return execute(input, next);
  };
  return {
    inbound: [inbound as WorkflowInboundCallsInterceptor],
    outbound: [
      whenTraced(OpenTelemetryOutboundInterceptor, () => otel?.outbound ?? null) as WorkflowOutboundCallsInterceptor,
    ],
    internals: [
      whenTraced(OpenTelemetryInternalsInterceptor, () => otel?.internals ?? null) as WorkflowInternalsInterceptor,
    ],
  };
};
