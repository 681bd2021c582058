/**
 * The Investigator path (docs/design.md#step-1a-the-investigator: vagueness = high, bypasses routing): digest
 * and hypotheses → the top three tested on the user's own rows (no number from the model) → the same validation
 * as every finding → a briefing with the verdicts appended, checked as it streams (binding: a sentence with a
 * number that traces to nothing is left out) → the check's record → memory. Synthesis does not run: the checked briefing is the answer.
 */
import { lastUserMessage } from '../contracts/last-user-message';
import type { TurnResult } from '../contracts/turn';
import { deterministicSteps, modelSteps } from './activity-proxies';
import type { TurnWorkflowInput } from './definitions';
import { recallMemory } from './memory';
import type { StepRunner } from './progress';
import { validateFindings } from './validate-findings';
import { finishTurn } from './finish-turn';

export async function investigatorTurn(
  step: StepRunner,
  input: TurnWorkflowInput,
  /** The memory read at the start of the turn; undefined for a turn started before it was read there. */
  recalled: string | undefined,
): Promise<TurnResult> {
  const { turnId, userId, messages } = input;
  const question = lastUserMessage(messages);
  const memory = recalled ?? (await recallMemory(step, input));
  const proposed = await step('investigator_hypotheses', () =>
    modelSteps.proposeHypotheses({
      turnId,
      userId,
      question,
      memory,
      includeMemory: input.context.include_memory,
      includeBiomarkers: input.context.include_biomarkers,
    }),
  );
  const { findings } = await step('investigator_test', () =>
    deterministicSteps.testHypotheses({ turnId, userId, hypotheses: proposed.hypotheses }),
  );
  const validated = await step('validation', () => validateFindings(step, { turnId, userId, memory }, findings));
  const written = await step('investigator_briefing', () =>
    modelSteps.writeBriefing({
      turnId,
      question,
      digest: proposed.digest,
      hypotheses: proposed.hypotheses,
      validated,
      startedAt: proposed.startedAt,
      costUsd: proposed.costUsd,
      memory,
    }),
  );
  const { briefing } = written;
  // Checked as it was written; its record and Fact Sheet are step 7b's. Histories recorded before the briefing
  // was checked as it streamed replay a result without the outcome, and their check did it all.
  const checked = await step('fact_check', () =>
    deterministicSteps.checkAnswer({
      turnId,
      answer: briefing,
      userMessage: question,
      findings: validated.map(({ finding, verdict, source }) => ({ finding, verdict, source })),
      ...((written as Partial<typeof written>).factCheck ? { factCheck: written.factCheck } : {}),
    }),
  );
  // The briefing as checked, with any number that traces to nothing removed. Histories recorded before the
  // check was binding replay a result without it: their answer is the briefing, as it was then.
  const answer = (checked as Partial<typeof checked>).answer ?? briefing;
  return await finishTurn(step, input, {
    answer,
    validated,
    memory,
    record: {
      factSheet: checked.factSheet,
      agentsUsed: ['investigator'],
      factCheck: checked.factCheck,
      path: 'investigator',
    },
  });
}
