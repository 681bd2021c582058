/**
 * The end of a turn that answered, whichever way it went (the fallback reply, a routed turn, the Investigator):
 * the memory step, then `complete_turn`. Written once, so every path remembers and completes the same way.
 */
import { log } from '@temporalio/workflow';
import { lastUserMessage } from '../contracts/last-user-message';
import type { TurnResult } from '../contracts/turn';
import type { CompleteTurnInput } from '../activities/bookkeeping/turn-lifecycle';
import type { RememberTurnInput } from '../activities/steps/memory';
import type { ValidatedFinding } from '../activities/steps/run-gates';
import { bookkeepingSteps, modelSteps } from './activity-proxies';
import type { TurnWorkflowInput } from './definitions';
import type { StepRunner } from './progress';
import { endsTheTurn } from './turn-stoppers';
import { validatorCounts } from './validate-findings';

export interface AnsweredTurn {
  /** The answer the user got. */
  answer: string;
  /** The turn's findings as validated; none when no agent ran. */
  validated: ValidatedFinding[];
  /**
   * The memory snapshot the turn's steps were given; undefined for a fallback turn started before memory was read
   * at the start: the extractor reads it.
   */
  memory: string | undefined;
  /** The rest of the turn's record: its Fact Sheet, the agents that ran, the fact-check, the path. */
  record: Omit<CompleteTurnInput, 'turnId' | 'answer' | 'validator'>;
}

export async function finishTurn(
  step: StepRunner,
  input: TurnWorkflowInput,
  { answer, validated, memory, record }: AnsweredTurn,
): Promise<TurnResult> {
  const { turnId } = input;
  await step('memory', () =>
    rememberTurn({
      turnId,
      userId: input.userId,
      includeMemory: input.context.include_memory,
      userMessage: lastUserMessage(input.messages),
      answer,
      validated,
      ...(memory === undefined ? {} : { memory }),
    }),
  );
  return await step('complete_turn', () =>
    bookkeepingSteps().completeTurn({ turnId, answer, ...record, validator: validatorCounts(validated) }),
  );
}

/**
 * Memory is best-effort (docs/design.md#step-8-memory): a turn that answered is not failed by its memory
 * step, except by what ends any turn (a cost cap reached stops it at this step boundary too).
 */
async function rememberTurn(input: RememberTurnInput): Promise<void> {
  try {
    await modelSteps.rememberTurn(input);
  } catch (err) {
    if (endsTheTurn(err)) throw err;
    log.warn('the memory step failed; the turn completes without it', { turnId: input.turnId, error: String(err) });
  }
}
