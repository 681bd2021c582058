/**
 * How the service's own code makes spans (a model call, a sandbox run, a gates request, an API request),
 * whatever backend they go to: ./tracing.ts decides that, once per process. Until it does, or when
 * tracing is off, every helper here is a no-op that calls the function it wraps and nothing else.
 *
 * A span says which turn and step, how long, how big and how it ended, never what the user said or
 * has: no message, answer, memory text, data value or generated code, and for an error only its class
 * (`error.type`), never its message, which can quote any of those (see platform/logger.ts). Content
 * goes on a model call's span only when AMY_OTEL_CAPTURE_CONTENT says so (`capturingContent()`).
 */
import { context, SpanStatusCode, trace, INVALID_SPAN_CONTEXT, type Span, type SpanOptions } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';

/** The turn a span belongs to, on every span of a turn's trace: an opaque ULID, not health data. */
export const ATTR_TURN_ID = 'amy.turn_id';

/** What ./tracing.ts set up: null while tracing is off. */
let recording: { captureContent: boolean } | null = null;

/** For ./tracing.ts only: spans are recorded from now on (or, with null, no more). */
export function setRecording(state: { captureContent: boolean } | null): void {
  recording = state;
}

export const tracingEnabled = (): boolean => recording !== null;

/** Whether a model call's span may carry its messages and its answer (AMY_OTEL_CAPTURE_CONTENT=true). */
export const capturingContent = (): boolean => recording?.captureContent ?? false;

const tracer = () => trace.getTracer('amy');
const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** An error's class for `error.type`: its name (`LlmRateLimitError`, `AbortError`), never its message. */
function errorType(err: unknown): string {
  if (err instanceof Error) return err.name && err.name !== 'Error' ? err.name : err.constructor.name;
  return typeof err;
}

/** Marks the span failed with `kind` (an error class, or a code of ours) and no message. */
export function failSpan(span: Span, kind: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute(ATTR_ERROR_TYPE, kind);
}

/**
 * Runs `fn` in a new span, the child of the active one, and ends it when `fn` settles; a rejection
 * marks it failed with the error's class. `fn` may add attributes of what it found (sizes, outcomes).
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!recording) return fn(NOT_RECORDING);
  return tracer().startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, errorType(err));
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Puts the turn id on the active span (an API request's), and on the spans it starts from now on. */
export function tagTurn(turnId: string): void {
  if (recording) trace.getActiveSpan()?.setAttribute(ATTR_TURN_ID, turnId);
}

/** The active trace's id, for a log line that names a turn: how an operator finds its trace. */
export function traceLogFields(): { trace_id?: string } {
  const span = trace.getSpan(context.active());
  return recording && span?.isRecording() ? { trace_id: span.spanContext().traceId } : {};
}
