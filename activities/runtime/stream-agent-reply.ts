import type { StreamAgent } from '../../contracts/events';
import { stepOfModelCall, type ModelCallId } from '../../contracts/steps';
import type { EventLog } from '../../platform/event-log';
import type { LlmRequest, LlmResponse } from '../../platform/llm';
import type { ModelCallInputs } from './model-call-inputs';
import type { StepDeps } from './step-deps';

const SUMMARY_CHARS = 160;

/**
 * An agent's narration on the event log. `agent.started` and `agent.completed` are deterministic:
 * keyed by agent and `invocation` (the step, or the agent's role in the turn), so a retried activity
 * never announces them twice. The `agent.thought` deltas in between carry their step and its attempt
 * number, so clients can drop a failed attempt's partial text.
 */
export async function announceAgentStarted(
  events: EventLog,
  call: { turnId: string; agent: StreamAgent; invocation: string; question: string; at: Date },
): Promise<void> {
  await events.append(call.turnId, [
    {
      type: 'agent.started',
      data: { agent: call.agent, at: call.at.toISOString(), question: call.question },
      dedupeKey: `agent.started:${call.agent}:${call.invocation}`,
    },
  ]);
}

export async function announceAgentCompleted(
  events: EventLog,
  call: {
    turnId: string;
    agent: StreamAgent;
    invocation: string;
    startedAt: Date;
    at: Date;
    costUsd: number;
    output: string;
  },
): Promise<void> {
  await events.append(call.turnId, [
    {
      type: 'agent.completed',
      data: {
        agent: call.agent,
        at: call.at.toISOString(),
        duration_ms: call.at.getTime() - call.startedAt.getTime(),
        cost_usd: call.costUsd,
        output_summary: call.output.slice(0, SUMMARY_CHARS),
      },
      dedupeKey: `agent.completed:${call.agent}:${call.invocation}`,
    },
  ]);
}

/**
 * What stands between the model's deltas and the log, for an agent that must not show some of what
 * the model writes (the Domain Expert's URLs): `push` returns what may be written now, `end` the rest.
 */
export interface ThoughtFilter {
  push(delta: string): string;
  end(): string;
}

/** Past this much unwritten text, the model stream waits for the event log to catch up. */
const MAX_UNWRITTEN_CHARS = 4096;

/**
 * Streams one model reply as the agent's `agent.thought` deltas, with no started/completed brackets.
 * One append is in flight at a time; text that arrives meanwhile is written by the next append as one
 * delta. A slow model gives one event per delta; a fast one costs far fewer transactions
 * than it sends deltas, and the text reaches clients as soon as the log can take it.
 */
export async function streamThoughts<Call extends ModelCallId>(
  { llm, events }: Pick<StepDeps, 'llm' | 'events'>,
  call: {
    turnId: string;
    /**
     * The model call streamed (the coach's `health_coach.main`). Its step is the one being attempted
     * (runStepAttempt's), named on every delta as `step.retry` names it.
     */
    modelCall: Call;
    /** What the call's prompt was rendered from. */
    inputs: ModelCallInputs[Call];
    attempt: number;
    signal: AbortSignal;
    agent: StreamAgent;
    request: LlmRequest;
    /** Passes the deltas through this before they are written; by default they are written as they come. */
    filter?: ThoughtFilter;
  },
): Promise<LlmResponse> {
  const { turnId, agent, attempt } = call;
  const step = stepOfModelCall(call.modelCall);
  const log: { unwritten: string; writing: Promise<void> | null; failed: { error: unknown } | null } = {
    unwritten: '',
    writing: null,
    failed: null,
  };
  const writeAll = async () => {
    while (log.unwritten !== '') {
      const delta = log.unwritten;
      log.unwritten = '';
      await events.append(turnId, [{ type: 'agent.thought', data: { agent, delta, attempt, step } }]);
    }
  };
  const startWriting = () =>
    (log.writing ??= writeAll()
      .catch((error: unknown) => void (log.failed = { error }))
      .finally(() => (log.writing = null)));
  const stream = { turnId, step: call.modelCall, inputs: call.inputs, attempt, signal: call.signal };
  const response = await llm.stream(stream, call.request, async (delta) => {
    // Throwing here aborts the model call: a log that cannot be written cannot take more text.
    if (log.failed) throw log.failed.error;
    log.unwritten += call.filter ? call.filter.push(delta) : delta;
    const inFlight = startWriting();
    if (log.unwritten.length > MAX_UNWRITTEN_CHARS) await inFlight;
  });
  if (call.filter) log.unwritten += call.filter.end();
  // Text can land just as a writer finishes, after its last look: keep writing until none is left.
  while (!log.failed && (log.writing || log.unwritten !== '')) await (log.writing ?? startWriting());
  if (log.failed) throw log.failed.error;
  return response;
}
