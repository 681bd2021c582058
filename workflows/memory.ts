/**
 * The turn's memory snapshot (docs/design.md#injection): the summary is read once, by the `recall_memory`
 * step, and every model call of the turn is given that same text, so nothing written while the turn runs
 * (by the API, or by another turn) changes what its agents, its Critic or its extractor see.
 */
import { patched } from '@temporalio/workflow';
import { bookkeepingSteps } from './activity-proxies';
import type { TurnWorkflowInput } from './definitions';
import type { StepRunner } from './progress';

/**
 * Marks turns that read memory at their start, before classifying vagueness, so that every model call
 * has it. Turns recorded before (test/histories, and any in flight across the deploy) read it after
 * rephrasing, or at the Investigator's start, and replay that way: their earlier steps had none.
 */
const MEMORY_READ_AT_TURN_START = 'memory-read-at-turn-start';

export async function recallMemory(step: StepRunner, input: TurnWorkflowInput): Promise<string> {
  const { summary } = await step('recall_memory', () =>
    bookkeepingSteps().recallMemory({
      userId: input.userId,
      includeMemory: input.context.include_memory,
      includeBiomarkers: input.context.include_biomarkers,
    }),
  );
  return summary;
}

/** The snapshot read at the start of the turn; undefined for a turn that started before memory was read there. */
export async function recallMemoryAtTurnStart(step: StepRunner, input: TurnWorkflowInput): Promise<string | undefined> {
  return patched(MEMORY_READ_AT_TURN_START) ? recallMemory(step, input) : undefined;
}
