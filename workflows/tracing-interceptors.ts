/**
 * The workflow side of a turn's trace (platform/temporal/tracing.ts), paid for only by traced workflows.
 *
 * OpenTelemetry's workflow interceptors make a span of the run and of every activity scheduled, and hand
 * each to the worker through a sink, whether or not anything exports them. Worse, their module tree (the
 * OpenTelemetry SDK and its semantic conventions) is evaluated again in every workflow run's sandbox:
 * together about 20 ms of worker CPU per knowledge turn (npm run bench, section (g), docs/benchmarks.md).
 * Here that module is loaded, and its interceptors made, only for a run whose start carries a trace
 * context, i.e. one started by a client with tracing on (the API with an OTLP endpoint set). Every other
 * run passes each call straight on.
 *
 * Replay-safe: the interceptors add headers and spans, never commands, and whether a run is traced is
 * read from its start's headers, which its history holds.
 */
import type {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header OpenTelemetry's client interceptor writes the trace context to (`TRACE_HEADER`). */
const TRACE_HEADER = '_tracer-data';

/**
 * The methods of the library's three interceptors, each passed on to them in a traced run. A test
 * (test/unit/workflow-tracing-methods.test.ts) holds these lists to the library's classes, so an upgrade
 * that adds one cannot leave it out unnoticed.
 */
export const TRACED_METHODS = {
  inbound: ['execute', 'handleSignal', 'handleUpdate', 'validateUpdate', 'handleQuery'],
  outbound: [
    'scheduleActivity',
    'scheduleLocalActivity',
    'startNexusOperation',
    'startChildWorkflowExecution',
    'continueAsNew',
    'signalWorkflow',
    'getLogAttributes',
    'getMetricTags',
  ],
  internals: ['dispose'],
} as const;

interface Traced {
  inbound: OpenTelemetryInboundInterceptor;
  outbound: OpenTelemetryOutboundInterceptor;
  internals: OpenTelemetryInternalsInterceptor;
}

type Next = (input: unknown) => unknown;
type Method = (this: unknown, input: unknown, next: Next) => unknown;

/** An interceptor whose `methods` go to the traced run's own interceptor of that kind, or straight to `next`. */
function whenTraced(methods: readonly string[], traced: () => object | undefined): Record<string, Method> {
  return Object.fromEntries(
    methods.map((name) => [
      name,
      (input: unknown, next: Next) => {
        const interceptor = traced() as Record<string, Method> | undefined;
        return interceptor ? interceptor[name].call(interceptor, input, next) : next(input);
      },
    ]),
  );
}

/** OpenTelemetry's interceptors, their module loaded now (in this run's sandbox), not with the bundle. */
function openTelemetryInterceptors(): Traced {
  const otel =
    require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof import('@temporalio/interceptors-opentelemetry/lib/workflow');
  return {
    inbound: new otel.OpenTelemetryInboundInterceptor(),
    outbound: new otel.OpenTelemetryOutboundInterceptor(),
    internals: new otel.OpenTelemetryInternalsInterceptor(),
  };
}

export const interceptors = (): WorkflowInterceptors => {
  let traced: Traced | undefined;
  const inbound = whenTraced(TRACED_METHODS.inbound, () => traced?.inbound);
  const execute = inbound.execute;
  // The run's first call: its headers say whether the client that started it traces.
  inbound.execute = (input, next) => {
    if ((input as WorkflowExecuteInput).headers[TRACE_HEADER] !== undefined) traced = openTelemetryInterceptors();
    return execute(input, next);
  };
  return {
    inbound: [inbound as WorkflowInboundCallsInterceptor],
    outbound: [whenTraced(TRACED_METHODS.outbound, () => traced?.outbound) as WorkflowOutboundCallsInterceptor],
    internals: [whenTraced(TRACED_METHODS.internals, () => traced?.internals) as WorkflowInternalsInterceptor],
  };
};
