/**
 * Step 6, validation (docs/design.md#step-6-validation): reproduction and the seven gates on every
 * finding, then the Critic on every finding the gates could judge, descriptions included, then the
 * Assessment on what is not rejected and is not a description (a level has no mechanism or strategy to
 * assess). Each is its own step (`gates`, `critic`, `assessment`), inside the caller's `validation` or
 * `pre_validation`; the critic and the assessment are listed in progress once per finding.
 */
import { isCancellation, log, patched } from '@temporalio/workflow';
import type { AgentFinding, GateVerdict, GatesOutcome } from '../contracts/findings';
import type { ValidatorCounts } from '../contracts/turn';
import type { AssessFindingInput, Assessment } from '../activities/steps/assessment';
import type { CritiqueFindingInput } from '../activities/steps/critic';
import type { CriticDecision, CriticVerdict } from '../activities/steps/critic/verdict';
import type { ValidatedFinding } from '../activities/steps/run-gates';
import { isDescription, statisticOf } from '../contracts/statistics';
import { bookkeeping, computeSteps, modelSteps } from './activity-proxies';
import { endsTheTurn } from './turn-stoppers';
import type { StepRunner } from './progress';

/**
 * The Critic's reject is final (docs/design.md#verdict-aggregation); its downgrade turns validated into
 * conditional.
 */
export function finalVerdict(gates: GateVerdict, critic: CriticDecision): GateVerdict {
  if (gates === 'rejected' || critic === 'reject') return 'rejected';
  if (critic === 'downgrade' && gates === 'validated') return 'conditional';
  return gates;
}

/**
 * The Critic's verdict: its activity is retried by Temporal while the model is unreachable; once the
 * retry budget is spent, the conservative downgrade (announced like any verdict), never a failed turn.
 */
async function critique(input: CritiqueFindingInput): Promise<CriticVerdict> {
  try {
    return await modelSteps.critiqueFinding(input);
  } catch (err) {
    if (endsTheTurn(err)) throw err;
    log.warn('the Critic could not be reached; the finding is downgraded', { findingId: input.finding.id });
    return bookkeeping.recordCriticFallback({ turnId: input.turnId, findingId: input.finding.id });
  }
}

/** The Assessment, retried the same way; once the budget is spent the finding goes on without one. */
async function assess(input: AssessFindingInput): Promise<Assessment | null> {
  try {
    return await modelSteps.assessFinding(input);
  } catch (err) {
    if (endsTheTurn(err)) throw err;
    log.warn('the Assessment could not be reached; the finding goes on without one', { findingId: input.finding.id });
    return null;
  }
}

/**
 * Turns validated before descriptions were gated assessed every finding the Critic did not reject,
 * descriptions included; their histories replay on the old branch (docs/operations.md#when-versioning-is-not-enough-patched).
 */
const ASSESSMENT_SKIPS_DESCRIPTIONS = 'assessment-skips-descriptions';

/** The Assessment gives a mechanism, a novelty and a strategy: an effect has them, a level of the user's data does not. */
const assessable = (finding: AgentFinding) => !(isDescription(finding) && patched(ASSESSMENT_SKIPS_DESCRIPTIONS));

export interface ValidationScope {
  turnId: string;
  userId: string;
  /** The turn's memory summary, read once at its start: the Critic and the Assessment see it, like every agent. */
  memory: string;
}

export async function validateFindings(
  step: StepRunner,
  { turnId, userId, memory }: ValidationScope,
  findings: AgentFinding[],
): Promise<ValidatedFinding[]> {
  if (findings.length === 0) return [];
  let outcomes: GatesOutcome[] | null;
  try {
    outcomes = await step('gates', () => computeSteps.runGates({ turnId, userId, findings }));
  } catch (err) {
    if (isCancellation(err)) throw err;
    // A gate runner that cannot run rejects; nothing unvalidated reaches the Fact Sheet.
    outcomes = null;
  }
  return Promise.all(
    findings.map(async (agentFinding, i): Promise<ValidatedFinding> => {
      const gates = outcomes?.[i] ?? null;
      if (gates === null) return { ...agentFinding, verdict: 'rejected', gates, critic: null, assessment: null };
      const { finding } = agentFinding;
      // Gates run by the release before descriptions were gated reported a reproduced description as a
      // fact, with no review: such a turn goes on as it began.
      if (gates.fact) return { ...agentFinding, verdict: gates.verdict, gates, critic: null, assessment: null };
      const statistic = statisticOf(agentFinding);
      const critic = await step('critic', () => critique({ turnId, finding, statistic, gates, memory }));
      const verdict = finalVerdict(gates.verdict, critic.decision);
      const assessment =
        verdict !== 'rejected' && assessable(agentFinding)
          ? await step('assessment', () => assess({ turnId, finding, critic, memory }))
          : null;
      return { ...agentFinding, verdict, gates, critic, assessment };
    }),
  );
}

export function validatorCounts(validated: ValidatedFinding[]): ValidatorCounts {
  const count = (verdict: GateVerdict) => validated.filter((v) => v.verdict === verdict).length;
  return {
    findings_total: validated.length,
    findings_validated: count('validated'),
    findings_conditional: count('conditional'),
    findings_rejected: count('rejected'),
  };
}
