/**
 * Step 7 and 7b (seed 002): synthesis streams the answer under the `synthesis` channel, constrained to
 * the fact sheet built here from the validated findings; then the deterministic fact-check flags any
 * number in the answer that does not trace back, as a `fact_check` event.
 */
import { AGENT_LABELS, type RoutableAgent } from '../../contracts/steps';
import type { FactEntry } from '../../contracts/turn';
import { factCheckReply, type FactCheckIssue } from './fact-check';
import { buildFactSheet, type BuiltFactSheet, type FactSheetFinding } from './fact-sheet';
import { withMemory } from './prompts/memory';
import { DS_FAILED_WARNING, FINAL_SYNTHESIS_SYSTEM } from './prompts/synthesis';
import type { StepDeps } from '../runtime/step-deps';
import { runStepAttempt } from '../runtime/step-attempt';
import { streamAgentReply } from '../runtime/stream-agent-reply';

export interface SynthesisFinding extends FactSheetFinding {
  finding: FactSheetFinding['finding'] & { claim: string };
  assessment?: { mechanism: string; strategy: string | null } | null;
}

/** A number about the user computed deterministically for the coach (seed 002, "computeAnchors"). */
export interface SynthesisAnchor {
  key: string;
  value: number;
  unit: string | null;
  n: number;
  window: string;
}

export interface SynthesisInput {
  turnId: string;
  userMessage: string;
  /** Whose draft leads: the coach's answer must end with the coach's forward question. */
  mainAgent: RoutableAgent;
  mainAgentDraft: string;
  supportingInsights: string;
  /** Domain Expert prose, whose reference numbers the fact-check accepts. */
  expertProse: string;
  findings: SynthesisFinding[];
  /** The coach's personal anchors: deterministic numbers the answer may cite, so they join the Fact Sheet. */
  anchors: SynthesisAnchor[];
  dataScienceFailed: boolean;
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
}

const ANCHOR_SOURCE = 'personal_anchor';

/** The Fact Sheet: the findings' numbers, then the anchors as `anchor.<key>`. */
export function synthesisFactSheet(input: Pick<SynthesisInput, 'findings' | 'anchors'>): BuiltFactSheet {
  const built = buildFactSheet(input.findings);
  for (const anchor of input.anchors) {
    if (!Number.isFinite(anchor.value)) continue;
    const claim = `anchor.${anchor.key}`;
    built.sheet[claim] = anchor.value;
    built.entries.push({
      claim,
      value: anchor.value,
      unit: anchor.unit,
      source: ANCHOR_SOURCE,
      n: anchor.n,
      window: anchor.window,
    });
  }
  return built;
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
        (e.source === ANCHOR_SOURCE ? ' [PERSONAL ANCHOR]' : e.verdict ? ' [CONDITIONAL]' : ' [VALIDATED]'),
    )
    .join('\n');
}

/** What the synthesis prompt is rendered from (and what the scripted model reads). */
export interface SynthesisPromptInputs extends Pick<
  SynthesisInput,
  'userMessage' | 'mainAgent' | 'mainAgentDraft' | 'supportingInsights' | 'findings' | 'dataScienceFailed'
> {
  /** The Fact Sheet: every number the answer may cite. */
  factSheet: FactEntry[];
}

export function synthesisPrompt(inputs: SynthesisPromptInputs): string {
  return [
    inputs.dataScienceFailed ? `${DS_FAILED_WARNING}\n` : '',
    `USER QUESTION:\n${inputs.userMessage}`,
    `MAIN AGENT: ${AGENT_LABELS[inputs.mainAgent]}`,
    `MAIN AGENT DRAFT:\n${inputs.mainAgentDraft || '(none)'}`,
    `SUPPORTING INSIGHTS:\n${inputs.supportingInsights || '(none)'}`,
    `VALIDATED FINDINGS:\n${findingsBlurb(inputs.findings)}`,
    `FACT SHEET:\n${factSheetBlock(inputs.factSheet)}`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

export function createSynthesise(deps: StepDeps) {
  return async function synthesise(input: SynthesisInput): Promise<SynthesisOutput> {
    const step = 'synthesis';
    const { sheet, entries } = synthesisFactSheet(input);
    const { userMessage, mainAgent, mainAgentDraft, supportingInsights, findings, dataScienceFailed } = input;
    const inputs: SynthesisPromptInputs = {
      userMessage,
      mainAgent,
      mainAgentDraft,
      supportingInsights,
      findings,
      dataScienceFailed,
      factSheet: entries,
    };
    const answer = await runStepAttempt(deps.events, input.turnId, step, ({ attempt, signal }) =>
      streamAgentReply(deps, {
        turnId: input.turnId,
        step,
        inputs,
        attempt,
        signal,
        agent: 'synthesis',
        question: input.userMessage,
        request: {
          model: deps.models.main,
          system: withMemory(FINAL_SYNTHESIS_SYSTEM, input.memory),
          maxTokens: 1500,
          messages: [{ role: 'user', content: synthesisPrompt(inputs) }],
        },
      }),
    );
    const factCheckIssues = await recordFactCheck(
      deps,
      input.turnId,
      factCheckReply(answer, sheet, input.userMessage, input.expertProse),
    );
    return { answer, factSheet: entries, factCheckIssues };
  };
}

/** Step 7b's event: the fact-check's issues, once per turn. */
async function recordFactCheck(deps: StepDeps, turnId: string, issues: FactCheckIssue[]): Promise<FactCheckIssue[]> {
  await deps.events.append(turnId, [{ type: 'fact_check', data: { issues }, dedupeKey: 'fact_check' }]);
  return issues;
}

export interface CheckAnswerInput {
  turnId: string;
  answer: string;
  userMessage: string;
  findings: FactSheetFinding[];
}

/**
 * Step 7b for an answer that synthesis did not write (the Investigator's briefing): its Fact Sheet,
 * built by the same rules, and the same deterministic fact-check.
 */
export function createCheckAnswer(deps: StepDeps) {
  return async function checkAnswer(
    input: CheckAnswerInput,
  ): Promise<{ factSheet: FactEntry[]; factCheckIssues: FactCheckIssue[] }> {
    const { sheet, entries } = buildFactSheet(input.findings);
    const factCheckIssues = await recordFactCheck(
      deps,
      input.turnId,
      factCheckReply(input.answer, sheet, input.userMessage),
    );
    return { factSheet: entries, factCheckIssues };
  };
}
