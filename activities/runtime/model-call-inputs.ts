/**
 * What each model call's prompt is rendered from, by call id (contracts/steps.ts). Each type lives next
 * to its prompt builder; the step passes the same object to the LLM client, which hands it to the
 * scripted model (and only to it), whose rules answer from these inputs rather than from the prompt's
 * wording. A call without an entry here does not compile (`extends Record<ModelCallId, object>`), and
 * dev/scripted-model/step-inputs.ts holds the schema the scripted model checks each one with.
 */
import type { ModelCallId } from '../../contracts/steps';
import type {
  CodePromptInputs,
  DebugPromptInputs,
  ExtractPromptInputs,
  PlanPromptInputs,
  SummaryPromptInputs,
} from '../agents/data-science/prompt';
import type { DomainExpertPromptInputs } from '../agents/domain-expert/prompt';
import type {
  CoachClosingPromptInputs,
  CoachGatePromptInputs,
  CoachMainPromptInputs,
} from '../agents/health-coach/prompt';
import type { BriefingPromptInputs, HypothesesPromptInputs } from '../agents/investigator/prompt';
import type { AssessmentPromptInputs } from '../steps/assessment/prompt';
import type { CriticPromptInputs } from '../steps/critic/prompt';
import type { FallbackPromptInputs } from '../steps/fallback-reply/prompt';
import type { MemoryExtractPromptInputs } from '../steps/memory/prompt';
import type { ReflectionPromptInputs } from '../steps/reflection/prompt';
import type { RephrasePromptInputs } from '../steps/rephrase/prompt';
import type { RoutingPromptInputs } from '../steps/route/prompt';
import type { VaguenessPromptInputs } from '../steps/classify-vagueness/prompt';
import type { ClarifyPromptInputs } from '../steps/clarify/prompt';
import type { SynthesisPromptInputs } from '../steps/synthesis/prompt';

export interface ModelCallInputs extends Record<ModelCallId, object> {
  classify_vagueness: VaguenessPromptInputs;
  clarify: ClarifyPromptInputs;
  investigator_hypotheses: HypothesesPromptInputs;
  investigator_briefing: BriefingPromptInputs;
  route: RoutingPromptInputs;
  fallback_reply: FallbackPromptInputs;
  rephrase: RephrasePromptInputs;
  ds_plan: PlanPromptInputs;
  ds_code: CodePromptInputs;
  ds_debug: DebugPromptInputs;
  ds_summary: SummaryPromptInputs;
  ds_extract: ExtractPromptInputs;
  domain_expert: DomainExpertPromptInputs;
  'health_coach.gate': CoachGatePromptInputs;
  'health_coach.main': CoachMainPromptInputs;
  'health_coach.finish': CoachClosingPromptInputs;
  'health_coach.summary': CoachClosingPromptInputs;
  reflection: ReflectionPromptInputs;
  critic: CriticPromptInputs;
  assessment: AssessmentPromptInputs;
  synthesis: SynthesisPromptInputs;
  memory: MemoryExtractPromptInputs;
}
