/**
 * Step 7 and 7b (seed 002): synthesis streams the answer under the `synthesis` channel, constrained to
 * the fact sheet built here from the validated findings; then the deterministic fact-check flags any
 * number in the answer that does not trace back, as a `fact_check` event.
 */
import type { FactEntry } from '../contracts/turn';
import { factCheckReply, type FactCheckIssue } from './fact-check';
import { buildFactSheet, type FactSheetFinding } from './fact-sheet';
import { DS_FAILED_WARNING, FINAL_SYNTHESIS_SYSTEM } from './prompts/synthesis';
import type { StepDeps } from './step-deps';
import { runStepAttempt } from './step-attempt';
import { streamAgentReply } from './stream-agent-reply';

export interface SynthesisFinding extends FactSheetFinding {
  finding: FactSheetFinding['finding'] & { claim: string };
  assessment?: { mechanism: string; strategy: string | null } | null;
}

export interface SynthesisInput {
  turnId: string;
  userMessage: string;
  mainAgentDraft: string;
  supportingInsights: string;
  /** Domain Expert prose, whose reference numbers the fact-check accepts. */
  expertProse: string;
  findings: SynthesisFinding[];
  dataScienceFailed: boolean;
}

export interface SynthesisOutput {
  answer: string;
  factSheet: FactEntry[];
  factCheckIssues: FactCheckIssue[];
}

function findingsBlurb(findings: SynthesisFinding[]): string {
  const shown = findings.filter((f) => f.verdict !== 'rejected');
  if (shown.length === 0) return '(none survived validation)';
  return shown
    .map((f) => {
      const lines = [`- ${f.finding.id} [${f.verdict.toUpperCase()}]: ${f.finding.claim}`];
      if (f.assessment?.mechanism) lines.push(`  mechanism: ${f.assessment.mechanism}`);
      if (f.assessment?.strategy) lines.push(`  strategy: ${f.assessment.strategy}`);
      return lines.join('\n');
    })
    .join('\n');
}

function factSheetBlock(entries: FactEntry[]): string {
  if (entries.length === 0) return '(empty)';
  return entries
    .map(
      (e) =>
        `- ${e.claim} = ${e.value}${e.unit ? ` ${e.unit}` : ''} (n=${e.n ?? '?'}, window: ${e.window ?? '?'})` +
        (e.verdict ? ' [CONDITIONAL]' : ' [VALIDATED]'),
    )
    .join('\n');
}

export function synthesisPrompt(input: SynthesisInput, entries: FactEntry[]): string {
  return [
    input.dataScienceFailed ? `${DS_FAILED_WARNING}\n` : '',
    `USER QUESTION:\n${input.userMessage}`,
    `MAIN AGENT DRAFT:\n${input.mainAgentDraft || '(none)'}`,
    `SUPPORTING INSIGHTS:\n${input.supportingInsights || '(none)'}`,
    `VALIDATED FINDINGS:\n${findingsBlurb(input.findings)}`,
    `FACT SHEET:\n${factSheetBlock(entries)}`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

export function createSynthesise(deps: StepDeps) {
  return async function synthesise(input: SynthesisInput): Promise<SynthesisOutput> {
    const step = 'synthesis';
    const { sheet, entries } = buildFactSheet(input.findings);
    const answer = await runStepAttempt(deps.events, input.turnId, step, ({ attempt, signal }) =>
      streamAgentReply(deps, {
        turnId: input.turnId,
        step,
        attempt,
        signal,
        agent: 'synthesis',
        question: input.userMessage,
        request: {
          model: deps.models.main,
          system: FINAL_SYNTHESIS_SYSTEM,
          maxTokens: 1500,
          messages: [{ role: 'user', content: synthesisPrompt(input, entries) }],
        },
      }),
    );
    const factCheckIssues = factCheckReply(answer, sheet, input.userMessage, input.expertProse);
    await deps.events.append(input.turnId, [
      { type: 'fact_check', data: { issues: factCheckIssues }, dedupeKey: 'fact_check' },
    ]);
    return { answer, factSheet: entries, factCheckIssues };
  };
}
