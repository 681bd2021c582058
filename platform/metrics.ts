/**
 * The service's Prometheus metrics (docs/operations.md#metrics): every metric the API and the worker
 * record, defined here and nowhere else, and the registry a process serves them from.
 *
 * Labels are bounded sets and nothing else: step and model-call ids (contracts/steps.ts), model ids
 * (the configured ones), a turn's path, outcomes and error codes from closed lists, HTTP methods and
 * statuses, and the API's route templates (`/v1/turns/:id`, never the path a request named). A turn id,
 * a user id, an API key, a message or any health data is never a label: they would leak what Postgres
 * keeps, and make a series per turn.
 *
 * Recording is synchronous and costs a map lookup and an addition, so the call sites (a model call, a
 * token delta's append, a sandbox run) stay one line and nothing waits on it. The metrics live in this
 * module, one set per process; a process serves them from `processRegistry()`, with Node's own.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { ApiErrorCode } from '../contracts/errors';
import type { ModelCallId, StepId, TurnPath } from '../contracts/steps';
import type { CredentialKind } from './credentials-in-text';

/** How long things take, in seconds: from an event append (milliseconds) to an agent's whole step (minutes). */
const STEP_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const MODEL_CALL_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
const STORE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const PYTHON_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** From a health check's milliseconds to a blocking `POST /v1/turns`, which lasts as long as its turn. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

const turnsStarted = new Counter({
  name: 'amy_turns_started_total',
  help: 'Turns that started running (queued → running), counted once per turn.',
  registers: [],
});

const turnsEnded = new Counter({
  name: 'amy_turns_ended_total',
  help: 'Turns that ended, by status, path (main agent, investigator, conversation, unknown) and error code (failed only).',
  labelNames: ['status', 'path', 'code'] as const,
  registers: [],
});

const stepAttemptDuration = new Histogram({
  name: 'amy_step_attempt_duration_seconds',
  help: 'One attempt of a pipeline step (its activity), by step id and outcome (ok, error, cancelled).',
  labelNames: ['step', 'outcome'] as const,
  buckets: STEP_BUCKETS,
  registers: [],
});

const stepRetries = new Counter({
  name: 'amy_step_retries_total',
  help: 'Attempts of a pipeline step after its first (Temporal retried the activity), by step id.',
  labelNames: ['step'] as const,
  registers: [],
});

const modelCalls = new Counter({
  name: 'amy_model_calls_total',
  help: 'Model calls, by model, model call id and outcome (as llm_calls records them).',
  labelNames: ['model', 'step', 'outcome'] as const,
  registers: [],
});

const modelCallDuration = new Histogram({
  name: 'amy_model_call_duration_seconds',
  help: 'Model calls from request to last token, by model and model call id.',
  labelNames: ['model', 'step'] as const,
  buckets: MODEL_CALL_BUCKETS,
  registers: [],
});

const modelTokens = new Counter({
  name: 'amy_model_tokens_total',
  help: 'Tokens billed for model calls, failed attempts included, by model, model call id and token_type (input, output).',
  labelNames: ['model', 'step', 'token_type'] as const,
  registers: [],
});

const modelCost = new Counter({
  name: 'amy_model_cost_usd_total',
  help: 'What model calls cost in USD (the price table over their tokens), by model and model call id.',
  labelNames: ['model', 'step'] as const,
  registers: [],
});

const eventAppendDuration = new Histogram({
  name: 'amy_event_append_duration_seconds',
  help: "Appending to a turn's event log: one transaction, from the row lock to the commit that notifies the streams.",
  buckets: STORE_BUCKETS,
  registers: [],
});

const sseStreamsOpen = new Gauge({
  name: 'amy_sse_streams_open',
  help: 'Event streams (GET /v1/turns/:id/events as text/event-stream) this process holds open.',
  registers: [],
});

const sseRequests = new Counter({
  name: 'amy_sse_requests_total',
  help:
    'Requests to the event stream route (GET /v1/turns/:id/events, served apart from the amy_http_* routes), by ' +
    'outcome: opened (a stream held open), json (the turn, for a client not asking for text/event-stream), ' +
    'already_ended (nothing left to send: opened and closed at once), client_left (before it could be answered), ' +
    'or the error code that refused it.',
  labelNames: ['outcome'] as const,
  registers: [],
});

const httpRequests = new Counter({
  name: 'amy_http_requests_total',
  help:
    "API requests answered, by method, route template (Express's, as /v1/turns/:id; unmatched when no route takes " +
    'the path) and status (499: the client left before the answer). The event stream route is amy_sse_*.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [],
});

const httpRequestDuration = new Histogram({
  name: 'amy_http_request_duration_seconds',
  help: 'API requests from their arrival to the last byte of the answer (or the client leaving), by method and route template.',
  labelNames: ['method', 'route'] as const,
  buckets: HTTP_BUCKETS,
  registers: [],
});

const apiErrors = new Counter({
  name: 'amy_api_errors_total',
  help:
    'Error answers of the API, its event stream route included, by error code (contracts/errors.ts: ' +
    'authentication_required, concurrency_limit_exceeded, rate_limited, cost_cap_exceeded, internal_error, …).',
  labelNames: ['code'] as const,
  registers: [],
});

const sandboxRunDuration = new Histogram({
  name: 'amy_sandbox_run_duration_seconds',
  help:
    'Sandbox runs of generated code (operation run) and its syntax checks (operation preflight), waiting for a slot ' +
    'included, by outcome (ok, an error kind such as timeout or memory_limit, aborted, unavailable, failed).',
  labelNames: ['operation', 'outcome'] as const,
  buckets: PYTHON_BUCKETS,
  registers: [],
});

const gatesRequestDuration = new Histogram({
  name: 'amy_gates_request_duration_seconds',
  help:
    'Requests to the Python gates processes (operation gates: judge findings; series: build their series), queueing ' +
    'included, by outcome (ok, aborted, or the runner failure: timeout, process_exited, …).',
  labelNames: ['operation', 'outcome'] as const,
  buckets: PYTHON_BUCKETS,
  registers: [],
});

/** A webhook attempt: from a local receiver's milliseconds to the 10 s deadline. */
const WEBHOOK_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const webhookAttempts = new Counter({
  name: 'amy_webhook_attempts_total',
  help:
    'Webhook delivery attempts (one HTTP request each), by outcome: succeeded, gone (410, the endpoint disabled), or ' +
    'why it will be retried (http_status, redirect, timeout, connection, tls, address_refused).',
  labelNames: ['outcome'] as const,
  registers: [],
});

const terraEvents = new Counter({
  name: 'amy_terra_events_total',
  help:
    'Terra deliveries (docs/terra.md), by outcome: at the receiver stored, duplicate, refused_signature, refused_body, ' +
    'unavailable; at ingestion applied, unmatched, refused.',
  labelNames: ['outcome'] as const,
  registers: [],
});

const domainExpertToolCalls = new Counter({
  name: 'amy_domain_expert_tool_calls_total',
  help:
    "The Domain Expert's tool calls, by tool and outcome: ok, or why the model got an error result (invalid_input, " +
    'refused, privacy_refused, tool_timeout, tool_rate_limited, tool_unavailable, tool_malformed_response, ' +
    'circuit_open, …). Never the query.',
  labelNames: ['tool', 'outcome'] as const,
  registers: [],
});

const webhookAttemptDuration = new Histogram({
  name: 'amy_webhook_attempt_duration_seconds',
  help: 'Webhook delivery attempts from resolving the receiver to its answer (or the 10 s deadline), by outcome.',
  labelNames: ['outcome'] as const,
  buckets: WEBHOOK_BUCKETS,
  registers: [],
});

const memoryEntriesWithheld = new Counter({
  name: 'amy_memory_entries_withheld_total',
  help:
    "Memory entries a turn's memory step left out because they looked like a credential " +
    '(platform/credentials-in-text.ts), by kind: api_key, access_token, private_key, password, card_number, random_string.',
  labelNames: ['kind'] as const,
  registers: [],
});

const SERVICE_METRICS: Metric[] = [
  turnsStarted,
  turnsEnded,
  stepAttemptDuration,
  stepRetries,
  modelCalls,
  modelCallDuration,
  modelTokens,
  modelCost,
  eventAppendDuration,
  sseStreamsOpen,
  sseRequests,
  httpRequests,
  httpRequestDuration,
  apiErrors,
  sandboxRunDuration,
  gatesRequestDuration,
  webhookAttempts,
  webhookAttemptDuration,
  terraEvents,
  domainExpertToolCalls,
  memoryEntriesWithheld,
];

/** A turn's ending as the metrics count it; `path` is unknown to a writer that did not run the turn (the reconciler). */
export interface TurnEndingLabels {
  status: 'completed' | 'failed';
  path: TurnPath | 'unknown';
  /** A failed turn's error code: one of contracts/errors.ts `TurnErrorCode`, which the workflow chose. */
  code?: string;
}

export interface ModelCallRecord {
  model: string;
  step: ModelCallId;
  /** As llm_calls.outcome (platform/llm/errors.ts `LlmCallOutcome`). */
  outcome: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  durationMs: number;
}

/** A closed list of strings chosen by the call site: a sandbox result kind, a gates runner failure. */
type Outcome = string;

/** How the event stream route answered a request: see `amy_sse_requests_total`. */
export type SseRequestOutcome = 'opened' | 'json' | 'already_ended' | 'client_left' | 'draining' | ApiErrorCode;

/** An API request as its metrics label it; `route` is a template or `unmatched`, never a request's path. */
export interface HttpRequestLabels {
  method: string;
  route: string;
  status: number;
}

export const metrics = {
  turnStarted(): void {
    turnsStarted.inc();
  },

  turnEnded({ status, path, code }: TurnEndingLabels): void {
    turnsEnded.inc(status === 'failed' && code ? { status, path, code } : { status, path });
  },

  /**
   * Times one attempt of a step (Temporal's attempt number: above 1 is a retry) and counts how it ended:
   * `cancelled` when `signal` was aborted (the turn cancelled, the attempt timed out or superseded).
   */
  timeStepAttempt<T>(step: StepId, attempt: number, signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    if (attempt > 1) stepRetries.inc({ step });
    const end = stepAttemptDuration.startTimer({ step });
    return run().then(
      (result) => {
        end({ outcome: 'ok' });
        return result;
      },
      (err: unknown) => {
        end({ outcome: signal.aborted ? 'cancelled' : 'error' });
        throw err;
      },
    );
  },

  modelCallEnded(call: ModelCallRecord): void {
    const { model, step } = call;
    modelCalls.inc({ model, step, outcome: call.outcome });
    modelCallDuration.observe({ model, step }, call.durationMs / 1000);
    modelTokens.inc({ model, step, token_type: 'input' }, call.inputTokens);
    modelTokens.inc({ model, step, token_type: 'output' }, call.outputTokens);
    modelCost.inc({ model, step }, call.costUsd);
  },

  /** Starts timing an append; call the result once it has committed (or failed). */
  eventAppendStarted(): () => void {
    const end = eventAppendDuration.startTimer();
    return () => void end();
  },

  /** Counts an open event stream; call the result when it closes (more than once is harmless). */
  sseStreamOpened(): () => void {
    sseStreamsOpen.inc();
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      sseStreamsOpen.dec();
    };
  },

  sseRequestAnswered(outcome: SseRequestOutcome): void {
    sseRequests.inc({ outcome });
  },

  /** Starts timing a request; call the result once, when it has been answered or its client has left. */
  httpRequestStarted(): (labels: HttpRequestLabels) => void {
    const end = httpRequestDuration.startTimer();
    return ({ method, route, status }) => {
      end({ method, route });
      httpRequests.inc({ method, route, status: String(status) });
    };
  },

  /** An error answer in the documented envelope, by its code: what alerts on refusals key on. */
  apiErrorAnswered(code: ApiErrorCode): void {
    apiErrors.inc({ code });
  },

  sandboxStarted(operation: 'run' | 'preflight'): (outcome: Outcome) => void {
    const end = sandboxRunDuration.startTimer({ operation });
    return (outcome) => void end({ outcome });
  },

  gatesRequestStarted(operation: 'gates' | 'series'): (outcome: Outcome) => void {
    const end = gatesRequestDuration.startTimer({ operation });
    return (outcome) => void end({ outcome });
  },

  webhookAttemptEnded(outcome: Outcome, latencyMs: number): void {
    webhookAttempts.inc({ outcome });
    webhookAttemptDuration.observe({ outcome }, latencyMs / 1000);
  },

  /** A Terra delivery at the receiver, or a Terra event's ingestion, by what became of it. */
  terraEvent(
    outcome:
      | 'stored'
      | 'duplicate'
      | 'refused_signature'
      | 'refused_body'
      | 'unavailable'
      | 'applied'
      | 'unmatched'
      | 'refused',
  ): void {
    terraEvents.inc({ outcome });
  },

  /** One Domain Expert tool call, by tool and outcome (activities/agents/domain-expert/run-tool.ts). */
  domainExpertToolCall(tool: string, outcome: string): void {
    domainExpertToolCalls.inc({ tool, outcome });
  },

  /** A turn's memory entry left out as a credential, by its kind (never its text). */
  memoryEntryWithheld(kind: CredentialKind): void {
    memoryEntriesWithheld.inc({ kind });
  },
};

let registry: Registry | null = null;

/**
 * This process's registry: the service's metrics and Node's own (`process_*`, `nodejs_*`: CPU, memory,
 * event loop lag, GC). One per process, whatever serves it; a role adds its own collectors to it (the
 * worker, Temporal's: worker/temporal-metrics.ts).
 */
export function processRegistry(): Registry {
  if (registry) return registry;
  registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const metric of SERVICE_METRICS) registry.registerMetric(metric);
  return registry;
}
