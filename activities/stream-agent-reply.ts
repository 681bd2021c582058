import type { StreamAgent } from '../contracts/events';
import type { EventLog } from './services/event-log';
import type { LlmRequest, LlmResponse } from './services/llm';
import type { StepDeps } from './step-deps';

const SUMMARY_CHARS = 160;

/**
 * An agent's narration on the event log. `agent.started` and `agent.completed` are deterministic:
 * keyed by agent and `invocation` (the step, or the agent's role in the turn), so a retried activity
 * never announces them twice. The `agent.thought` deltas in between carry the attempt number, so
 * clients can drop a failed attempt's partial text.
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

/** Streams one model reply as the agent's `agent.thought` deltas, with no started/completed brackets. */
export function streamThoughts(
  { llm, events }: Pick<StepDeps, 'llm' | 'events'>,
  call: { turnId: string; step: string; attempt: number; signal: AbortSignal; agent: StreamAgent; request: LlmRequest },
): Promise<LlmResponse> {
  const { turnId, agent, attempt } = call;
  return llm.stream({ turnId, step: call.step, attempt, signal: call.signal }, call.request, async (delta) => {
    await events.append(turnId, [{ type: 'agent.thought', data: { agent, delta, attempt } }]);
  });
}

/** One model reply streamed as a whole agent turn: started, thoughts, completed. */
export async function streamAgentReply(
  deps: StepDeps,
  call: {
    turnId: string;
    step: string;
    attempt: number;
    signal: AbortSignal;
    agent: StreamAgent;
    question: string;
    request: LlmRequest;
  },
): Promise<string> {
  const { turnId, agent, step } = call;
  const startedAt = deps.clock();
  await announceAgentStarted(deps.events, { turnId, agent, invocation: step, question: call.question, at: startedAt });
  const response = await streamThoughts(deps, call);
  await announceAgentCompleted(deps.events, {
    turnId,
    agent,
    invocation: step,
    startedAt,
    at: deps.clock(),
    costUsd: response.costUsd,
    output: response.text,
  });
  return response.text;
}
