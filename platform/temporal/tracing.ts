/**
 * A turn's trace across Temporal, with `@temporalio/interceptors-opentelemetry`: the API's workflow
 * start (`StartWorkflow:TurnWorkflow`) carries the trace context in a header; the workflow's run
 * (`RunWorkflow:TurnWorkflow`) and each activity it schedules (`StartActivity:…`) are spans made in the
 * workflow sandbox and handed to the worker through a sink; each activity's execution (`RunActivity:…`)
 * continues from the header of its scheduling. See docs/operations.md#traces.
 *
 * The workflow side only adds a header to the commands it sends and calls a sink, which is not called
 * while a history is replayed: the workflow's decisions, and so its determinism, are untouched (the
 * recorded histories in test/histories replay with it). It is in the workflow bundle whether tracing is
 * on or not, so every worker of that bundle, replaying ones included, registers the sink; it makes spans
 * only for a run started with a trace context (by a client with tracing on).
 */
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { isTurnId } from '../../contracts/ids';
import { ATTR_TURN_ID, tracingEnabled } from '../spans';
import { activeSpanPipeline } from '../tracing';

/**
 * The workflow interceptors, for bundleWorkflowCode's `workflowInterceptorModules`: OpenTelemetry's, made
 * only for a run whose start carries a trace context (workflows/tracing-interceptors.ts).
 */
export const WORKFLOW_TRACING_MODULES = [require.resolve('../../workflows/tracing-interceptors')];

/** For the API's Temporal client: a workflow start (and query, cancel…) is a span whose context the workflow continues. */
export function workflowClientTracing(): ClientInterceptors | undefined {
  return tracingEnabled() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

/**
 * For the worker: each activity is a span, the child of its scheduling in the workflow, and the
 * activity's log lines carry its trace and span ids. Nothing while tracing is off.
 */
export const activityTracingInterceptors: ActivityInterceptorsFactory = (ctx) =>
  tracingEnabled()
    ? {
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }
    : {};

/**
 * The workflow's spans, as the worker hands them on. The library copies the info it is given onto
 * each span's attributes; a whole WorkflowInfo would put the memo, the search attributes and a
 * previous run's result there, so it is given the workflow's ids alone (and the turn id).
 */
function workflowSpanAttributes(info: WorkflowInfo) {
  return {
    temporalWorkflowId: info.workflowId,
    run_id: info.runId,
    ...(isTurnId(info.workflowId) ? { [ATTR_TURN_ID]: info.workflowId } : {}),
  };
}

/** The sink the workflow interceptors export their spans to: dropped while tracing is off. */
export function workflowTracingSinks(): InjectedSinks<OpenTelemetrySinks> {
  return {
    exporter: {
      export: {
        fn(info, spans) {
          const pipeline = activeSpanPipeline();
          if (!pipeline) return;
          const attributes = workflowSpanAttributes(info) as unknown as WorkflowInfo;
          return makeWorkflowExporter(pipeline.processor, pipeline.resource).export.fn(attributes, spans);
        },
      },
    },
  };
}
