/**
 * Data Science, the answer (docs/design.md#data-science): a short prose summary of the result, streamed as the agent's
 * thoughts. It is the main agent's draft for synthesis; its numbers reach the user only through the
 * Fact Sheet, never from this text.
 */
import { SUMMARY_SYSTEM, summaryUserPrompt } from './prompt';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt } from '../../runtime/step-attempt';
import { withMemory } from '../../runtime/memory-injection';
import type { Invocation } from '../../../contracts/steps';
import { streamThoughts } from '../../runtime/stream-agent-reply';

export interface SummariseAnalysisInput {
  turnId: string;
  /** The agent's role in the turn; names the run in the Web UI's activity summary (step 3, 4 or 5). */
  invocation: Invocation;
  question: string;
  result: unknown;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

export function createSummariseAnalysis(deps: StepDeps) {
  return async function summariseAnalysis(
    input: SummariseAnalysisInput,
  ): Promise<{ summary: string; costUsd: number }> {
    const { turnId } = input;
    return runStepAttempt(deps.events, turnId, 'ds_summary', async ({ narration, signal }) => {
      const inputs = { question: input.question, result: input.result };
      const response = await streamThoughts(deps, {
        turnId,
        modelCall: 'ds_summary',
        inputs,
        narration,
        signal,
        agent: 'data_science',
        request: {
          model: deps.models.fast,
          system: withMemory(SUMMARY_SYSTEM, input.memory),
          maxTokens: 400,
          messages: [{ role: 'user', content: summaryUserPrompt(inputs) }],
        },
      });
      return { summary: response.text, costUsd: response.costUsd };
    });
  };
}
