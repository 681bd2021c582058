import type { DataTable } from '../../../contracts/findings';
import { AGENT_LABELS, type RoutableAgent } from '../../../contracts/steps';
import type { FactEntry, PersonalAnchorEntry } from '../../../contracts/turn';
import type { FactSheetFinding } from '../../../checks/fact-sheet';
import type { LlmRequest } from '../../../platform/llm';

/** Step 7's system prompt (docs/design.md, "Step 7: synthesis"): short, its rules the ones the step must keep. */
export const FINAL_SYNTHESIS_SYSTEM = `You are Amy, a unified personal health agent. Speak as a single coherent voice. Do not mention specific sub-agents. Honour the FACT SHEET and validated findings, never invent numbers or contradict the validation verdicts.
Rules:
1. Numbers MUST come from the FACT SHEET, or from the PERSONAL ANCHORS for the user's own recent levels. No invention, no inconsistent rounding, no interpolation. If a value is not there, say we'd need to look more closely.
2. VALIDATED findings: state with confidence. CONDITIONAL: hedge ("preliminary signal", "worth tracking"). REJECTED findings are not listed and must not be mentioned.
3. Lead with the strongest validated finding. No throat-clearing.
4. Weave in mechanism and strategy from the assessment when available.
5. One voice: never refer to "the data scientist" or "the domain expert".
6. Coach mode ends with the coach's forward question; other modes end cleanly.
7. Focused: answer the asked thing first.`;

const DS_FAILED_WARNING = `⚠ DATA SCIENCE STATUS: FAILED. The data analysis sandbox did NOT complete successfully this turn. There is no validated quantitative result. You MUST be honest, NOT invent numbers, NOT cite a "result", and offer a narrower follow-up.`;

/**
 * The repair turn after the fact-check (step 7b): the answer went out sentence by sentence until one stated
 * numbers that are not in the Fact Sheet; the model is told which, as it wrote them, and writes on from what went
 * out (given as the start of its reply) without them.
 */
function factCheckRepair(untraced: string[]): string {
  return [
    `FACT-CHECK: your answer was stopped at a sentence stating numbers that are not in the FACT SHEET${
      untraced.length > 0 ? `: ${untraced.join('; ')}` : ''
    }. That sentence and what followed it were not shown.`,
    'Go on with the answer from where the shown part ends (your reply starts with it): write the rest of the answer ' +
      'again from there. None of these numbers may appear, in any rounding or unit. Every number you state must be a ' +
      "FACT SHEET value; where the answer needs a number the FACT SHEET does not have, say we'd need to look more " +
      'closely instead.',
  ].join('\n');
}

export interface SynthesisFinding extends FactSheetFinding {
  finding: FactSheetFinding['finding'] & { claim: string };
  /** The table a Data Science finding was computed from (absent: daily). */
  table?: DataTable;
  assessment?: { mechanism: string; strategy: string | null } | null;
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

/** The coach's anchors, apart from the Fact Sheet: the user's own levels, computed by our code, not findings. */
function personalAnchorsBlock(anchors: PersonalAnchorEntry[]): string {
  if (anchors.length === 0) return '(none)';
  return anchors
    .map((a) => `- ${a.claim} = ${a.value}${a.unit ? ` ${a.unit}` : ''}: ${a.label} (n=${a.n}, window: ${a.window})`)
    .join('\n');
}

/** What the synthesis prompt is rendered from (and what the scripted model reads). */
export interface SynthesisPromptInputs {
  userMessage: string;
  /** Whose draft leads: the coach's answer must end with the coach's forward question. */
  mainAgent: RoutableAgent;
  mainAgentDraft: string;
  supportingInsights: string;
  findings: SynthesisFinding[];
  dataScienceFailed: boolean;
  /** The Fact Sheet: every validated number the answer may cite. */
  factSheet: FactEntry[];
  /** The coach's personal anchors, which the answer may also cite as the user's own recent levels. */
  personalAnchors: PersonalAnchorEntry[];
  /** Only when synthesis writes the answer again after the fact-check: its first answer and the numbers that failed. */
  repair?: SynthesisRepair;
  /** Only when the turn asked the user what the question meant (docs/api.md#asking-back): the exchange. */
  clarification?: SynthesisClarification;
}

export interface SynthesisClarification {
  question: string;
  /** The reply the turn went on with: the user's, or the most likely reading's when none came. */
  answer: string;
  /** No answer came by the deadline: the answer took the most likely reading and must say so. */
  assumed: boolean;
}

/** The exchange, and when nobody answered, the rule that the answer says which reading it took. */
function clarificationBlock({ question, answer, assumed }: SynthesisClarification): string {
  return assumed
    ? `CLARIFICATION: you asked the user "${question}" and no answer came in time, so the analysis took the most ` +
        `likely reading: "${answer}". Say so in one short sentence at the start of the answer.`
    : `CLARIFICATION: you asked the user "${question}" and they answered "${answer}". Answer that reading.`;
}

interface SynthesisRepair {
  previousAnswer: string;
  /** Each number as the answer wrote it ("58 bpm"). */
  untraced: Array<{ value: number; text: string }>;
}

function synthesisPrompt(inputs: SynthesisPromptInputs): string {
  return [
    inputs.dataScienceFailed ? `${DS_FAILED_WARNING}\n` : '',
    `USER QUESTION:\n${inputs.userMessage}`,
    inputs.clarification ? clarificationBlock(inputs.clarification) : '',
    `MAIN AGENT: ${AGENT_LABELS[inputs.mainAgent]}`,
    `MAIN AGENT DRAFT:\n${inputs.mainAgentDraft || '(none)'}`,
    `SUPPORTING INSIGHTS:\n${inputs.supportingInsights || '(none)'}`,
    `VALIDATED FINDINGS:\n${findingsBlurb(inputs.findings)}`,
    `FACT SHEET:\n${factSheetBlock(inputs.factSheet)}`,
    inputs.personalAnchors.length > 0
      ? `PERSONAL ANCHORS (the user's own recent levels, computed from their data; not findings):\n${personalAnchorsBlock(inputs.personalAnchors)}`
      : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** The conversation of a synthesis call: the prompt, and for a repair, the first answer and what the check found. */
export function synthesisMessages(inputs: SynthesisPromptInputs): LlmRequest['messages'] {
  const prompt = { role: 'user' as const, content: synthesisPrompt(inputs) };
  if (!inputs.repair) return [prompt];
  return [
    prompt,
    { role: 'assistant', content: inputs.repair.previousAnswer },
    { role: 'user', content: factCheckRepair(inputs.repair.untraced.map((n) => n.text)) },
  ];
}
