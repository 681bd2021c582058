import type { AnalysisStatistic, Finding, GatesOutcome } from '../../../contracts/findings';
import { isDescription, LEVEL_ESTIMATES, statisticOf } from '../../../contracts/statistics';
import type { LiteraturePrior } from '../../../activities/data/literature-priors';
import { formatNumber } from '../../../activities/steps/critic/prompt';
import type { ScriptedRule } from '../types';

/**
 * The Critic: reads the finding, what it computed, its gates and the literature priors it is given, and
 * follows the gates, as a careful reviewer would. What the gates rejected, or a near-tautology, it
 * rejects; a failed soft gate is a medium `noise` concern; an association no prior speaks for gets a
 * low `confounder` concern; a prior about the same pair that points the other way is a
 * `literature_contradiction`. Fewer than 30 observations is `small_n`: medium for an inference, low for
 * a description that estimates a level or a spread (it describes those days, and the sample_size gate
 * has already held it to its minimum), none for an exact record of the window (a count, a latest
 * reading). A description claims no cause, so nothing else is held against it. Any medium or high
 * concern rules out accept.
 */

export interface ReviewedFinding {
  kind: string;
  feature: string;
  target: string | null;
  n: number;
  /** The sign of the effect (`effect`, `rho` or `correlation` in its numbers), 0 when none is given. */
  effectSign: number;
  /** A description's kind: an estimate of a level or a spread, or an exact record of its window; null for an inference. */
  describes: 'estimate' | 'record' | null;
}

export interface ReviewedPrior {
  id: string;
  feature: string;
  target: string | null;
  direction: string;
  summary: string;
  citation: string;
}

interface ReviewedGate {
  gate: string;
  verdict: 'passed' | 'failed' | 'skipped';
  /** The gate's numbers as the prompt shows them (formatNumber), so a concern quotes what the model read. */
  numbers: Record<string, number>;
}

interface Concern {
  category: string;
  detail: string;
  severity: 'low' | 'medium' | 'high';
}

const EFFECT_KEYS = ['effect', 'rho', 'correlation'];

/** The finding as the Critic weighs it; without `statistic` (the Assessment's inputs), its kind's default. */
export function reviewedFinding(finding: Finding, statistic?: AnalysisStatistic): ReviewedFinding {
  const effect = EFFECT_KEYS.map((key) => finding.numbers[key]).find((value) => typeof value === 'number') ?? 0;
  const computed = statisticOf({ finding, statistic });
  const estimate = (LEVEL_ESTIMATES as readonly AnalysisStatistic[]).includes(computed);
  return {
    kind: finding.kind,
    feature: finding.feature,
    target: finding.target,
    n: finding.n,
    effectSign: Math.sign(effect as number),
    describes: isDescription({ finding, statistic: computed }) ? (estimate ? 'estimate' : 'record') : null,
  };
}

export const reviewedPriors = (priors: LiteraturePrior[]): ReviewedPrior[] =>
  priors.map((p) => ({
    id: p.id,
    feature: p.feature,
    target: p.target,
    direction: p.direction,
    summary: p.summary,
    citation: p.source.citation,
  }));

/** Said in words, not as a number: why a statistic is missing, or why the gate crashed. */
const PROSE_DETAIL_KEYS = ['applicable', 'reason', 'error'];

function reviewedGates(outcome: GatesOutcome): ReviewedGate[] {
  return outcome.gates.map(({ gate, verdict, detail }) => {
    const numbers = Object.entries(detail).flatMap(([key, value]): Array<[string, number]> =>
      !PROSE_DETAIL_KEYS.includes(key) && typeof value === 'number' && Number.isFinite(value)
        ? [[key, Number(formatNumber(value))]]
        : [],
    );
    return { gate, verdict, numbers: Object.fromEntries(numbers) };
  });
}

/** A prior about this very pair of names, in either order. */
export function isPairPrior(prior: ReviewedPrior, finding: ReviewedFinding): boolean {
  const pair = [finding.feature, finding.target];
  return prior.target !== null && pair.includes(prior.feature) && pair.includes(prior.target);
}

/** |ρ| this close to the hard gate's 0.85 means the feature nearly re-expresses the target. */
const NEAR_TAUTOLOGY_RHO = 0.8;
const SMALL_N = 30;

const SOFT_GATE_NOISE: Record<string, string> = {
  effect_vs_noise: "the change is smaller than half of the metric's day-to-day spread",
  bootstrap: 'the bootstrap 95% interval includes zero, so the direction is not settled',
  subgroup_consistency: 'the two halves of the window disagree on the direction',
  method_triangulation: 'Spearman and Kendall disagree on the direction',
  discriminative_power: 'the effect is below the noise floor of personal data (|rho| < 0.10)',
};

function gateConcerns(finding: ReviewedFinding, gates: ReviewedGate[]): Concern[] {
  const concerns: Concern[] = [];
  const byName = new Map(gates.map((g) => [g.gate, g]));
  const construct = byName.get('construct_validity');
  const rho = construct?.numbers.rho;
  if (construct?.verdict === 'failed' || (rho !== undefined && Math.abs(rho) >= NEAR_TAUTOLOGY_RHO)) {
    concerns.push({
      category: 'tautology',
      detail: `${finding.feature} and ${finding.target} move almost in lockstep${rho === undefined ? '' : ` (rho=${rho})`}, so one likely re-expresses the other.`,
      severity: 'high',
    });
  }
  if (byName.get('sample_size')?.verdict === 'failed') {
    concerns.push({
      category: 'small_n',
      detail: `Only ${finding.n} observations, below the minimum.`,
      severity: 'high',
    });
  } else if (finding.describes === 'estimate' && finding.n < SMALL_N) {
    concerns.push({
      category: 'small_n',
      detail: `Only ${finding.n} observations: this describes those days rather than the usual level.`,
      severity: 'low',
    });
  } else if (finding.describes === null && finding.n < SMALL_N) {
    concerns.push({ category: 'small_n', detail: `Only ${finding.n} observations support this.`, severity: 'medium' });
  }
  for (const gate of gates) {
    const why = SOFT_GATE_NOISE[gate.gate];
    if (why && gate.verdict === 'failed') {
      concerns.push({ category: 'noise', detail: `${gate.gate} failed: ${why}.`, severity: 'medium' });
    }
  }
  return concerns;
}

/** The sign of ρ a prior's direction predicts; `none` and `u_shaped` predict no sign. */
const SIGN_OF: Record<string, number | undefined> = { positive: 1, negative: -1 };

function literatureConcerns(finding: ReviewedFinding, priors: ReviewedPrior[]): Concern[] {
  if (finding.kind !== 'association') return [];
  if (priors.length === 0) {
    return [
      {
        category: 'confounder',
        detail: `No literature prior links ${finding.feature} and ${finding.target}, so a shared driver such as weekly routine may explain it.`,
        severity: 'low',
      },
    ];
  }
  return priors
    .filter((p) => isPairPrior(p, finding) && SIGN_OF[p.direction] === -finding.effectSign)
    .map((p) => ({
      category: 'literature_contradiction',
      detail: `The literature (${p.id}) expects a ${p.direction} relation, the opposite of this finding's direction.`,
      severity: 'medium' as const,
    }));
}

function decide(gateVerdict: string, concerns: Concern[]): 'accept' | 'downgrade' | 'reject' {
  if (gateVerdict === 'rejected' || concerns.some((c) => c.category === 'tautology')) return 'reject';
  return concerns.some((c) => c.severity !== 'low') ? 'downgrade' : 'accept';
}

const RATIONALES = {
  accept: 'Nothing in the gates or the literature argues against the finding.',
  downgrade: 'The concerns above make it a preliminary signal rather than a validated one.',
  reject: 'The gates or a near-tautology rule it out as a finding.',
};

/** Why a description the gates let through is accepted: the contract's own reasoning for one. */
const acceptedDescription = (finding: ReviewedFinding) =>
  `A descriptive summary of ${finding.n} observation${finding.n === 1 ? '' : 's'} of your own data, not a causal claim: no confounders to flag.`;

export const critic: ScriptedRule<'critic'> = {
  step: 'critic',
  respond(req) {
    const finding = reviewedFinding(req.inputs.finding, req.inputs.statistic);
    const gates = reviewedGates(req.inputs.gates);
    const gateVerdict = req.inputs.gates.verdict;
    const concerns = [
      ...gateConcerns(finding, gates),
      ...literatureConcerns(finding, reviewedPriors(req.inputs.priors)),
    ];
    const decision = decide(gateVerdict, concerns);
    const applicable = gates.filter((g) => g.verdict !== 'skipped');
    const passed = applicable.filter((g) => g.verdict === 'passed').length;
    return {
      text: JSON.stringify({
        decision,
        concerns,
        rationale: `${passed} of ${applicable.length} applicable gates passed (gate verdict: ${gateVerdict}). ${
          decision === 'accept' && finding.describes !== null ? acceptedDescription(finding) : RATIONALES[decision]
        }`,
      }),
    };
  },
};
