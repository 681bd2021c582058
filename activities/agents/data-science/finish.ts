import { announceAgentCompleted } from '../../runtime/stream-agent-reply';
import type { StepDeps } from '../../runtime/step-deps';
import type { Invocation } from '../../../contracts/steps';

export interface FinishDataScienceInput {
  turnId: string;
  invocation: Invocation;
  startedAt: string;
  /** The agent's model spend, summed over its steps' successful calls. */
  costUsd: number;
  status: 'ok' | 'failed';
  /** The summary when the agent succeeded, why it failed otherwise. */
  output: string;
}

/** Closes the Data Science agent's narration with `agent.completed` (once per invocation). */
export function createFinishDataScience(deps: StepDeps) {
  return async function finishDataScience(input: FinishDataScienceInput): Promise<void> {
    await announceAgentCompleted(deps.events, {
      turnId: input.turnId,
      agent: 'data_science',
      invocation: input.invocation,
      startedAt: new Date(input.startedAt),
      at: deps.clock(),
      costUsd: input.costUsd,
      output: input.status === 'ok' ? input.output : `Analysis failed: ${input.output}`,
    });
  };
}
