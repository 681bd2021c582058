/**
 * The Hypothesis Investigator's prompts (docs/design.md#hypothesis-investigator): INVESTIGATOR_SYSTEM
 * proposes testable hypotheses from the digest, INVESTIGATOR_BRIEFING writes the user-facing briefing
 * once the top hypotheses have been computed and validated.
 *
 * User prompts are labelled blocks (QUESTION, DIGEST, ALREADY TESTED, COLUMNS, HYPOTHESES, VALIDATED
 * FINDINGS), one fact per line, so the model reads each unambiguously.
 * The briefing is the turn's final answer and is fact-checked, so its prompt says where numbers may
 * come from: only the VALIDATED FINDINGS block, whose numbers are also the Fact Sheet's.
 */
import type { Finding, GateVerdict } from '../../../contracts/findings';
import type { Hypothesis } from './hypotheses';
import type { TestedHypothesis } from './tested-hypotheses';
import { DAILY_METRICS } from '../../../contracts/health-records';
import { renderDigest, type HealthDigest } from './digest';

export const INVESTIGATOR_SYSTEM = `You are the Hypothesis Investigator of Amy, a personal health assistant. The user asked an open question about their own wearable data. From the DIGEST of that data, propose the hypotheses most worth testing: patterns that look real, matter for health, and one computation can check.
Each hypothesis is tested automatically by exactly one computation on the user's daily rows:
- association: Spearman's rho between feature_to_test and target_to_test over every day with both values;
- trend: the mean of feature_to_test over the last 30 days against the 30 days before;
- scalar: the mean and SD of feature_to_test over every day.
Rules:
1. feature_to_test and target_to_test are names from COLUMNS, exactly; target_to_test is null unless kind is association.
2. Never propose anything listed under ALREADY TESTED, in either direction: it has been tested and remembered.
3. Propose 3 to 6 hypotheses, the most promising first; confidence (0 to 1) is how likely the test confirms it.
4. A title states the claim in words, without numbers: the numbers come from the test.
5. Set missing_data_flag when the digest shows the data needed is sparse.
Answer with a JSON array only, no prose:
[{"id": "h1", "title": "<one sentence claim, plain English>", "rationale": "<why the digest suggests it, and the likely mechanism>", "test_plan": "<the computation>", "data_required": ["<column>"], "missing_data_flag": false, "expected_impact": "high" | "medium" | "low", "confidence": 0.0, "next_action": "<what the user could do if it holds>", "kind": "association" | "trend" | "scalar", "feature_to_test": "<column>", "target_to_test": "<column>" | null}]`;

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function testedLine(t: TestedHypothesis): string {
  const kind = t.kind ?? 'trend or scalar';
  const columns = t.target === null ? t.feature : `${t.feature} → ${t.target}`;
  const effect = t.effect === null ? '' : ` (effect ${t.effect})`;
  return `- [${t.verdict}] ${kind}: ${columns}${effect}: ${oneLine(t.claim)}`;
}

/** What the hypotheses prompt is rendered from (and what the scripted model reads). */
export interface HypothesesPromptInputs {
  question: string;
  /** The digest of the user's data, rendered into the prompt by renderDigest. */
  digest: HealthDigest;
  /** What memory says was tested already: never to be proposed again. */
  tested: TestedHypothesis[];
}

export function hypothesesUserPrompt(input: HypothesesPromptInputs): string {
  const tested = input.tested.length === 0 ? '(none)' : input.tested.map(testedLine).join('\n');
  return [
    `QUESTION:\n${oneLine(input.question)}`,
    `DIGEST:\n${renderDigest(input.digest)}`,
    `ALREADY TESTED:\n${tested}`,
    `COLUMNS:\n${DAILY_METRICS.join(', ')}`,
  ].join('\n\n');
}

export const INVESTIGATOR_BRIEFING = `You are the Hypothesis Investigator of Amy, a personal health assistant, writing the answer to an open question about the user's own data. You looked at the DIGEST, proposed HYPOTHESES, and the most promising were computed and statistically validated.
Rules:
1. Numbers: cite only numbers from VALIDATED FINDINGS, exactly as written there. Describe everything else (the digest, the hypotheses) in words, never with a number.
2. A [VALIDATED] finding may be stated plainly; a [CONDITIONAL] one is a preliminary signal worth tracking.
3. A hypothesis whose test did not hold up is not a finding: do not present it as one. A hypothesis not tested yet may be mentioned as something worth looking into.
4. Lead with the most useful validated finding, explain briefly why it plausibly happens, and end with one concrete next step the user could take or ask about.
5. Two short paragraphs at most, plain language, no headings, no lists of statistics. The tested findings and their numbers are appended below your text automatically.`;

export interface BriefingFinding {
  finding: Pick<Finding, 'id' | 'claim' | 'numbers'>;
  verdict: GateVerdict;
}

/** A finding's numbers as `key = value`, the values exactly as in the finding (a CI as `[low, high]`). */
export function numbersText(numbers: Finding['numbers']): string {
  return Object.entries(numbers)
    .map(([key, value]) => `${key.replace(/_/g, ' ')} = ${Array.isArray(value) ? `[${value.join(', ')}]` : value}`)
    .join(', ');
}

const STATUS: Record<GateVerdict, string> = {
  validated: 'tested, validated',
  conditional: 'tested, conditional',
  rejected: 'tested, did not hold up',
};

/** What the briefing prompt is rendered from (and what the scripted model reads). */
export interface BriefingPromptInputs {
  question: string;
  /** The digest as the hypotheses prompt showed it. */
  digest: string;
  /** Each proposed hypothesis with the id its test's finding has (or would have). */
  hypotheses: Array<Pick<Hypothesis, 'title' | 'rationale'> & { findingId: string }>;
  validated: BriefingFinding[];
}

export function briefingUserPrompt(input: BriefingPromptInputs): string {
  const verdicts = new Map(input.validated.map((v) => [v.finding.id, v.verdict]));
  const hypotheses = input.hypotheses.map((h) => {
    const verdict = verdicts.get(h.findingId);
    const status = verdict ? STATUS[verdict] : 'not tested yet';
    return `- ${oneLine(h.title)} (${status})${h.rationale.trim() ? `\n  why: ${oneLine(h.rationale)}` : ''}`;
  });
  // Rejected findings contribute no numbers: nothing about them may be cited as a result.
  const shown = input.validated.filter((v) => v.verdict !== 'rejected');
  const findings = shown.map(
    (v) => `- [${v.verdict.toUpperCase()}] ${oneLine(v.finding.claim)}: ${numbersText(v.finding.numbers)}`,
  );
  return [
    `QUESTION:\n${oneLine(input.question)}`,
    `DIGEST:\n${input.digest}`,
    `HYPOTHESES:\n${hypotheses.length === 0 ? '(none)' : hypotheses.join('\n')}`,
    `VALIDATED FINDINGS:\n${findings.length === 0 ? '(none)' : findings.join('\n')}`,
  ].join('\n\n');
}
