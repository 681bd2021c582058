/**
 * The Critic's prompt (docs/design.md#the-critic). The user prompt is a set of
 * labelled blocks (FINDING, GATES, LITERATURE PRIORS), one fact per line, so the model reads each gate
 * result and prior unambiguously. The user's memory is at the top of the system prompt, as for every agent.
 */
import type { AnalysisStatistic, Finding, GateResult, GatesOutcome } from '../../../contracts/findings';
import { isDescription } from '../../../contracts/statistics';
import type { LiteraturePrior } from '../../data/literature-priors';

export const CRITIC_SYSTEM = `You are the Critic in Amy's validation phase: an adversarial reviewer of one quantitative claim computed from a person's own wearable and lab data.
The deterministic gates have already run (reproduction, sample_size and construct_validity are hard gates; the rest are soft). Your job is what the statistics cannot see: confounders, reverse causation, selection bias (missing days are rarely random), contradictions with the literature priors, tautologies (the feature re-expressing the target), small samples and noise. Treat every failed gate as evidence against the claim. Use what you remember about the user only as context (a stated preference, routine or piece of history can be the confounder).
A description (the Computed line says so) reports a level of the user's own data over its window: a mean, a spread, a count, a latest reading. It claims no cause, so confounders, reverse causation, tautologies and literature contradictions do not apply to it. Judge whether its observations can stand for what it states: for an average or a spread, how many days it covers (small_n) and whether the missing days could bias it (selection_bias); a count, a total, an extreme or a latest reading is an exact record of the window, which a small number does not weaken.

Concern categories: confounder, reverse_causation, selection_bias, literature_contradiction, tautology, small_n, noise.
Severity: low, medium or high. Each concern's detail is one sentence about this finding, not a generic caveat.

Hard rules:
- ANY concern with severity "high" → decision "reject" or "downgrade", never "accept".
- 2 or more concerns with severity "medium" → decision at least "downgrade".
- "accept" only with 0-1 concerns of severity "low" and a plausible mechanism (for a description: observations that can stand for what it states).

Reply with JSON only:
{"decision": "accept" | "downgrade" | "reject", "concerns": [{"category": "<category>", "detail": "<one sentence>", "severity": "low" | "medium" | "high"}], "rationale": "<two-sentence summary>"}`;

/** What the Critic's prompt is rendered from (and what the scripted model reads). */
export interface CriticPromptInputs {
  finding: Finding;
  /** What the finding computed: a description's statistic tells the Critic there is no inference to attack. */
  statistic: AnalysisStatistic;
  gates: GatesOutcome;
  priors: LiteraturePrior[];
}

/** Enough digits to judge an effect by, without a wall of float noise: a number as the prompt shows it. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value) || Number.isInteger(value)) return String(value);
  return String(Number(Math.abs(value) < 1 ? value.toPrecision(3) : value.toFixed(2)));
}

function formatValue(value: unknown): string {
  if (typeof value === 'number') return formatNumber(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) {
    return `[${value.map(formatNumber).join(', ')}]`;
  }
  return value === null || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/** Free text on one line, so a newline inside it cannot pass for the next fact or entry. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** One line per fact: the claim, the kind, the names the priors were matched on, the numbers. */
export function findingBlock(finding: Finding): string {
  const numbers = Object.entries(finding.numbers).map(([key, value]) => `${key}=${formatValue(value)}`);
  return [
    'FINDING:',
    `Id: ${finding.id}`,
    `Kind: ${finding.kind}`,
    `Claim: ${oneLine(finding.claim)}`,
    `Feature: ${finding.feature}`,
    `Target: ${finding.target ?? 'none'}`,
    `n: ${finding.n}`,
    `Window: ${oneLine(finding.window)}`,
    `Numbers: ${numbers.join(', ') || 'none'}`,
    `Proposed mechanism: ${finding.mechanism ? oneLine(finding.mechanism) : 'none given'}`,
  ].join('\n');
}

const VERDICT_MARKS = { passed: '✓', failed: '✗', skipped: '–' } as const;
/** Said in words after the numbers, not as a number: why a statistic is missing, or why the gate crashed. */
const PROSE_DETAIL_KEYS = ['reason', 'error'];

/** `- bootstrap: ✗ failed (ci_low=-0.1, ci_high=0.2, …) — reason: …` */
function gateLine({ gate, verdict, detail }: GateResult): string {
  const numbers = Object.entries(detail)
    .filter(([key]) => key !== 'applicable' && !PROSE_DETAIL_KEYS.includes(key))
    .map(([key, value]) => `${key}=${formatValue(value)}`);
  const prose = PROSE_DETAIL_KEYS.filter((key) => typeof detail[key] === 'string').map(
    (key) => ` — ${key}: ${String(detail[key])}`,
  );
  return `- ${gate}: ${VERDICT_MARKS[verdict]} ${verdict}${numbers.length > 0 ? ` (${numbers.join(', ')})` : ''}${prose.join('')}`;
}

function gatesBlock(outcome: GatesOutcome): string {
  const summary =
    `Gate verdict: ${outcome.verdict} (${outcome.passes} of ${outcome.applicable} applicable gates passed; ` +
    `hard rejection: ${outcome.hard_rejection ?? 'none'})`;
  return ['GATES:', summary, ...outcome.gates.map(gateLine)].join('\n');
}

/** Each prior as a head line (id, names, direction, effect size) and its summary and citation below. */
export function priorsBlock(priors: LiteraturePrior[]): string {
  if (priors.length === 0) return "LITERATURE PRIORS:\n- none match this finding's feature or target";
  const entries = priors.map((p) =>
    [
      `- [${p.id}] ${p.feature} → ${p.target ?? 'any outcome'}: ${p.direction}; typical effect: ${p.typical_effect}`,
      `  Summary: ${p.summary}`,
      `  Citation: ${p.source.citation}`,
    ].join('\n'),
  );
  return ['LITERATURE PRIORS:', ...entries].join('\n');
}

/** What was computed, and whether that makes the finding a description or an inference. */
function computedLine(finding: Finding, statistic: AnalysisStatistic): string {
  const what = isDescription({ finding, statistic })
    ? "a description of the window's own data, not an inference"
    : 'an inference beyond the window';
  return `Computed: ${statistic} (${what})`;
}

export function criticUserPrompt({ finding, statistic, gates, priors }: CriticPromptInputs): string {
  return [
    'Review this finding. Apply the hard rules, then reply with the JSON object only.',
    `${findingBlock(finding)}\n${computedLine(finding, statistic)}`,
    gatesBlock(gates),
    priorsBlock(priors),
  ].join('\n\n');
}
