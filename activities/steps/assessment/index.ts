/**
 * The Assessment (docs/design.md#the-assessment): for a finding the Critic
 * did not reject, a mechanism, how novel it is, one strategy for this week, and citations. It is
 * optional colour for synthesis: a malformed answer or an unavailable model yields `null`, never a
 * failed turn.
 */
import { log } from '@temporalio/activity';
import { z } from 'zod';
import type { Finding } from '../../../contracts/findings';
import { completeStep } from '../../runtime/complete-step';
import type { CriticVerdict } from '../critic/verdict';
import { priorsFor, type LiteraturePrior } from '../../data/literature-priors';
import { ASSESSMENT_SYSTEM, assessmentUserPrompt } from './prompt';
import { parseModelJson } from '../../../platform/llm';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import type { StepDeps } from '../../runtime/step-deps';

const NOVELTY_LEVELS = ['established', 'supported', 'emerging', 'user_specific'] as const;

const assessmentAnswerSchema = z.object({
  mechanism: z.string().min(1),
  novelty: z.enum(NOVELTY_LEVELS),
  strategy: z.string().nullable(),
  citations: z.array(z.string()),
});

export interface Assessment {
  mechanism: string;
  novelty: (typeof NOVELTY_LEVELS)[number];
  /** One concrete step for this week; null when the finding offers no clear lever. */
  strategy: string | null;
  /** Citations of the finding's literature priors, as the priors file words them. */
  citations: string[];
}

export interface AssessFindingInput {
  turnId: string;
  finding: Finding;
  critic: CriticVerdict;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

const normaliseCitation = (text: string) =>
  text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.;,]+$/, '')
    .trim();

/**
 * The Assessment may cite the priors it was given and nothing else: each citation the model
 * gives must carry a prior's full citation text (the model may add a link or a trailing period). What
 * is kept is the prior's own wording, in the model's order, each at most once.
 */
function citationsFromPriors(cited: string[], priors: LiteraturePrior[]): string[] {
  const known = priors.map((prior) => prior.source.citation);
  const matched = cited.flatMap((text) => {
    const given = normaliseCitation(text);
    return known.filter((citation) => given.includes(normaliseCitation(citation)));
  });
  return [...new Set(matched)];
}

export function createAssessFinding(deps: StepDeps) {
  return async function assessFinding(input: AssessFindingInput): Promise<Assessment | null> {
    const { finding, critic } = input;
    if (critic.decision === 'reject') {
      throw new Error(`finding ${finding.id} was rejected by the Critic: only non-rejected findings are assessed`);
    }
    const priors = priorsFor(finding);
    try {
      const response = await completeStep(deps, {
        turnId: input.turnId,
        step: 'assessment',
        inputs: { finding, critic, priors },
        model: deps.models.validator,
        system: ASSESSMENT_SYSTEM,
        memory: input.memory,
        prompt: assessmentUserPrompt({ finding, critic, priors }),
        maxTokens: 800,
      });
      const answer = parseModelJson(response.text, assessmentAnswerSchema, response.requestId);
      return {
        mechanism: answer.mechanism,
        novelty: answer.novelty,
        strategy: answer.strategy?.trim() || null,
        citations: citationsFromPriors(answer.citations, priors),
      };
    } catch (err) {
      // Malformed output: no assessment, and the turn goes on. An unreachable model is transient: it
      // propagates so Temporal retries, and the workflow goes on without an assessment only when the
      // retry budget is spent. Cancellation and refused requests propagate too.
      if (!(err instanceof ModelOutputInvalidError)) throw err;
      log.warn('assessment skipped', { findingId: finding.id, error: err.message });
      return null;
    }
  };
}
