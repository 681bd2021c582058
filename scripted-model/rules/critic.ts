import type { ScriptedRule } from '../types';

/**
 * The Critic (seed 002): reads the FINDING, GATES and LITERATURE PRIORS blocks of its prompt and
 * follows the gates, as a careful reviewer would. What the gates rejected, or a near-tautology, it
 * rejects; a failed soft gate is a medium `noise` concern; fewer than 30 observations is `small_n`; an
 * association no prior speaks for gets a low `confounder` concern; a prior about the same pair that
 * points the other way is a `literature_contradiction`. Any medium or high concern rules out accept.
 */

export interface PromptFinding {
  kind: string;
  feature: string;
  target: string | null;
  n: number;
  /** The sign of the effect (`effect`, `rho` or `correlation` in Numbers), 0 when none is given. */
  effectSign: number;
}

export interface PromptPrior {
  id: string;
  feature: string;
  target: string | null;
  direction: string;
  summary: string;
  citation: string;
}

interface PromptGate {
  gate: string;
  verdict: 'passed' | 'failed' | 'skipped';
  numbers: Record<string, number>;
}

interface Concern {
  category: string;
  detail: string;
  severity: 'low' | 'medium' | 'high';
}

const field = (text: string, name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(text)?.[1].trim() ?? '';

/** The lines of a block, from its `NAME:` header to the next blank line. */
function blockLines(text: string, name: string): string[] {
  const start = text.indexOf(`\n${name}:\n`);
  if (start === -1) return [];
  const body = text.slice(start + name.length + 3);
  const end = body.indexOf('\n\n');
  return (end === -1 ? body : body.slice(0, end)).split('\n');
}

const EFFECT_KEYS = ['effect', 'rho', 'correlation'];

export function readFinding(text: string): PromptFinding {
  const target = field(text, 'Target');
  const numbers = Object.fromEntries(
    [...field(text, 'Numbers').matchAll(/(\w+)=(-?[\d.]+(?:e[+-]?\d+)?)/g)].map((m) => [m[1], Number(m[2])]),
  );
  const effect = EFFECT_KEYS.map((key) => numbers[key]).find((value) => value !== undefined) ?? 0;
  return {
    kind: field(text, 'Kind'),
    feature: field(text, 'Feature'),
    target: target === '' || target === 'none' ? null : target,
    n: Number(field(text, 'n')),
    effectSign: Math.sign(effect),
  };
}

const PRIOR_HEAD = /^- \[([\w-]+)\] (\S+) → (.+?): (positive|negative|none|u_shaped);/;

export function readPriors(text: string): PromptPrior[] {
  const priors: PromptPrior[] = [];
  for (const line of blockLines(text, 'LITERATURE PRIORS')) {
    const head = PRIOR_HEAD.exec(line);
    const current = priors.at(-1);
    if (head) {
      const [, id, feature, target, direction] = head;
      priors.push({
        id,
        feature,
        target: target === 'any outcome' ? null : target,
        direction,
        summary: '',
        citation: '',
      });
    } else if (current && line.startsWith('  Summary: ')) current.summary = line.slice('  Summary: '.length);
    else if (current && line.startsWith('  Citation: ')) current.citation = line.slice('  Citation: '.length);
  }
  return priors;
}

const GATE_LINE = /^- (\w+): \S+ (passed|failed|skipped)\b(.*)$/;

function readGates(text: string): PromptGate[] {
  return blockLines(text, 'GATES').flatMap((line) => {
    const match = GATE_LINE.exec(line);
    if (!match) return [];
    const numbers = Object.fromEntries(
      [...match[3].matchAll(/(\w+)=(-?[\d.]+(?:e[+-]?\d+)?)\b/g)].map((m) => [m[1], Number(m[2])]),
    );
    return [{ gate: match[1], verdict: match[2] as PromptGate['verdict'], numbers }];
  });
}

/** A prior about this very pair of names, in either order. */
export function isPairPrior(prior: PromptPrior, finding: PromptFinding): boolean {
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

function gateConcerns(finding: PromptFinding, gates: PromptGate[]): Concern[] {
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
  } else if (finding.n < SMALL_N) {
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

function literatureConcerns(finding: PromptFinding, priors: PromptPrior[]): Concern[] {
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

export const critic: ScriptedRule<'critic'> = {
  step: 'critic',
  respond(req) {
    const text = req.lastUserText;
    const finding = readFinding(text);
    const gates = readGates(text);
    const gateVerdict = /^Gate verdict: (\w+)/m.exec(text)?.[1] ?? 'conditional';
    const concerns = [...gateConcerns(finding, gates), ...literatureConcerns(finding, readPriors(text))];
    const decision = decide(gateVerdict, concerns);
    const applicable = gates.filter((g) => g.verdict !== 'skipped');
    const passed = applicable.filter((g) => g.verdict === 'passed').length;
    return {
      text: JSON.stringify({
        decision,
        concerns,
        rationale: `${passed} of ${applicable.length} applicable gates passed (gate verdict: ${gateVerdict}). ${RATIONALES[decision]}`,
      }),
    };
  },
};
