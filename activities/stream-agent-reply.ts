import type { StreamAgent } from '../contracts/events';
import type { LlmRequest } from './services/llm';
import type { StepDeps } from './step-deps';

const SUMMARY_CHARS = 160;

/**
 * Streams one model reply onto the event log as an agent's narration: `agent.started` and
 * `agent.completed` are deterministic (deduplicated across retries), the `agent.thought` deltas in
 * between carry the attempt number so clients can drop a failed attempt's partial text.
 */
export async function streamAgentReply(
  { llm, events, clock }: StepDeps,
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
  const { turnId, agent, attempt } = call;
  const startedAt = clock();
  await events.append(turnId, [
    {
      type: 'agent.started',
      data: { agent, at: startedAt.toISOString(), question: call.question },
      dedupeKey: `agent.started:${agent}:${call.step}`,
    },
  ]);
  const response = await llm.stream(
    { turnId, step: call.step, attempt, signal: call.signal },
    call.request,
    async (delta: string) => {
      await events.append(turnId, [{ type: 'agent.thought', data: { agent, delta, attempt } }]);
    },
  );
  const finishedAt = clock();
  await events.append(turnId, [
    {
      type: 'agent.completed',
      data: {
        agent,
        at: finishedAt.toISOString(),
        duration_ms: finishedAt.getTime() - startedAt.getTime(),
        cost_usd: response.costUsd,
        output_summary: response.text.slice(0, SUMMARY_CHARS),
      },
      dedupeKey: `agent.completed:${agent}:${call.step}`,
    },
  ]);
  return response.text;
}
