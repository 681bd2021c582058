/**
 * Data Science, stage 2 (docs/design.md#data-science): code-gen, and the debug iterations that rewrite the code
 * with the previous error in hand. Both answer with the body of `analysis(...)`; neither runs it.
 */
import {
  CODE_SYSTEM,
  DEBUG_SYSTEM,
  codeUserPrompt,
  debugUserPrompt,
  type CodePromptInputs,
  type DebugPromptInputs,
} from './prompt';
import { completeStep } from '../../runtime/complete-step';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import type { StepDeps } from '../../runtime/step-deps';
import type { Invocation } from '../../../contracts/steps';
import type { AnalysisPlan } from './plan';
import { readTurnDataCounts } from '../../../platform/health-data/snapshot';
import { ANALYSED_TABLES, lacksData, withheld } from '../../runtime/no-data-reply';

export interface AnalysisCode {
  code: string;
  costUsd: number;
}

/** The body inside the answer's first fenced block, or the whole answer when it has no fence. */
export function codeFromAnswer(text: string, requestId: string | null = null): string {
  const fenced = /```(?:python3?|py)?[ \t]*\n([\s\S]*?)```/i.exec(text);
  const code = (fenced ? fenced[1] : text).replace(/\s+$/, '');
  if (code.trim() === '') throw new ModelOutputInvalidError('the answer holds no code', { requestId });
  return code;
}

/** One code-writing call: both steps answer with a body, on the Data Science model. */
async function askForCode(
  deps: StepDeps,
  call:
    | { turnId: string; step: 'ds_code'; inputs: CodePromptInputs; system: string; memory?: string; prompt: string }
    | { turnId: string; step: 'ds_debug'; inputs: DebugPromptInputs; system: string; memory?: string; prompt: string },
): Promise<AnalysisCode> {
  const response = await completeStep(deps, {
    ...call,
    memory: call.memory,
    model: deps.models.dataScience,
    maxTokens: 2000,
  });
  return { code: codeFromAnswer(response.text, response.requestId), costUsd: response.costUsd };
}

export interface WriteAnalysisCodeInput {
  turnId: string;
  /** The agent's role in the turn; names the run in the Web UI's activity summary (step 3, 4 or 5). */
  invocation: Invocation;
  question: string;
  plan: AnalysisPlan;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

/** The code of a turn with no daily summaries: never run (the run refuses first), so no model writes it. */
const NO_DATA_CODE = "raise ValueError('no daily summaries to analyse')";

/** The code of a plan over the lab results the turn left out: never run either, so no model writes it. */
const WITHHELD_TABLE_CODE = "raise ValueError('the lab results were left out of this turn')";

export function createWriteAnalysisCode(deps: StepDeps) {
  return async function writeAnalysisCode(input: WriteAnalysisCodeInput): Promise<AnalysisCode> {
    const counts = await readTurnDataCounts(deps.pool, input.turnId);
    if (counts && lacksData(counts, ANALYSED_TABLES)) return { code: NO_DATA_CODE, costUsd: 0 };
    if (counts && withheld(counts, input.plan.spec.table ?? 'daily')) return { code: WITHHELD_TABLE_CODE, costUsd: 0 };
    const inputs: CodePromptInputs = { question: input.question, approach: input.plan.approach };
    return askForCode(deps, {
      turnId: input.turnId,
      step: 'ds_code',
      inputs,
      system: CODE_SYSTEM,
      memory: input.memory,
      prompt: codeUserPrompt(inputs),
    });
  };
}

export interface DebugAnalysisCodeInput extends WriteAnalysisCodeInput {
  code: string;
  /** What the previous run reported: the exception and the code's own traceback lines. */
  error: string;
}

export function createDebugAnalysisCode(deps: StepDeps) {
  return async function debugAnalysisCode(input: DebugAnalysisCodeInput): Promise<AnalysisCode> {
    const inputs: DebugPromptInputs = {
      question: input.question,
      approach: input.plan.approach,
      code: input.code,
      error: input.error,
    };
    return askForCode(deps, {
      turnId: input.turnId,
      step: 'ds_debug',
      inputs,
      system: DEBUG_SYSTEM,
      memory: input.memory,
      prompt: debugUserPrompt(inputs),
    });
  };
}
