/**
 * Step 6, validation (seed 002, "The validation phase"): reproduction and the seven gates on every
 * finding, then the Critic on every finding the gates could judge, then the Assessment on what is not
 * rejected; neither runs on a reproduced description, a fact with no inference to critique or assess. Each is
 * its own step (`gates`, `critic`, `assessment`), inside the caller's `validation` or `pre_validation`;
 * the critic and the assessment are listed in progress once per finding.
 */
import { isCancellation } from '@temporalio/workflow';
import type { AgentFinding, GateVerdict, GatesOutcome } from '../contracts/findings';
import type { ValidatorCounts } from '../contracts/turn';
import type { CriticDecision } from '../activities/steps/critic';
import type { ValidatedFinding } from '../activities/steps/validation';
import { computeSteps, modelSteps } from './activities';
import type { StepRunner } from './progress';

/** Seed 002: the Critic's reject is final; its downgrade turns validated into conditional. */
export function finalVerdict(gates: GateVerdict, critic: CriticDecision): GateVerdict {
  if (gates === 'rejected' || critic === 'reject') return 'rejected';
  if (critic === 'downgrade' && gates === 'validated') return 'conditional';
  return gates;
}

export async function validateFindings(
  step: StepRunner,
  { turnId, userId }: { turnId: string; userId: string },
  findings: AgentFinding[],
): Promise<ValidatedFinding[]> {
  if (findings.length === 0) return [];
  let outcomes: GatesOutcome[] | null;
  try {
    outcomes = await step('gates', () => computeSteps.runGates({ turnId, userId, findings }));
  } catch (err) {
    if (isCancellation(err)) throw err;
    // Seed 002: a gate runner that cannot run rejects; nothing unvalidated reaches the Fact Sheet.
    outcomes = null;
  }
  return Promise.all(
    findings.map(async (agentFinding, i): Promise<ValidatedFinding> => {
      const gates = outcomes?.[i] ?? null;
      if (gates === null) return { ...agentFinding, verdict: 'rejected', gates, critic: null, assessment: null };
      const { finding } = agentFinding;
      // A reproduced description is a fact about the user's own rows: no inference to critique or assess.
      if (gates.fact) return { ...agentFinding, verdict: gates.verdict, gates, critic: null, assessment: null };
      const critic = await step('critic', () => modelSteps.critiqueFinding({ turnId, userId, finding, gates }));
      const verdict = finalVerdict(gates.verdict, critic.decision);
      const assessment =
        verdict === 'rejected'
          ? null
          : await step('assessment', () => modelSteps.assessFinding({ turnId, finding, critic }));
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
