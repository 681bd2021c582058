import type { ModelCallId } from '../../../contracts/steps';
import type { ScriptedRule } from '../types';
import { assessment } from './assessment';
import { classifyVagueness } from './classify-vagueness';
import { clarify } from './clarify';
import { critic } from './critic';
import { dataScienceRules, type DataScienceRuleOptions } from './data-science';
import { domainExpert } from './domain-expert';
import { fallbackReply } from './fallback-reply';
import { healthCoachFinish, healthCoachGate, healthCoachMain, healthCoachSummary } from './health-coach';
import { investigatorBriefing, investigatorHypotheses } from './investigator';
import { memoryExtract } from './memory-extract';
import { reflection } from './reflection';
import { rephrase } from './rephrase';
import { route } from './route';
import { synthesisRule, type UntracedNumberMode } from './synthesis';

/** One rule per model call, keyed by its id (contracts/steps.ts): a call without a rule does not compile. */
type ScriptedRuleTable = { [Call in ModelCallId]: ScriptedRule<Call> };

/**
 * The rule for every model call of the pipeline, one module per step. `brokenCode` makes the Data
 * Science code step fail first (`first`) or always (`always`); `wrongResult` makes it return a wrong
 * number (`number`) or compute over another window than planned (`window`). `untracedNumber` makes
 * synthesis state a number that traces to nothing, on its first writing (`first`) or also when told to
 * write the answer again (`always`).
 */
export function scriptedRules(
  options: DataScienceRuleOptions & { untracedNumber?: UntracedNumberMode } = {},
): ScriptedRule[] {
  const table: ScriptedRuleTable = {
    classify_vagueness: classifyVagueness,
    clarify,
    investigator_hypotheses: investigatorHypotheses,
    investigator_briefing: investigatorBriefing,
    route,
    fallback_reply: fallbackReply,
    rephrase,
    ...dataScienceRules(options),
    domain_expert: domainExpert,
    'health_coach.gate': healthCoachGate,
    'health_coach.main': healthCoachMain,
    'health_coach.finish': healthCoachFinish,
    'health_coach.summary': healthCoachSummary,
    reflection,
    critic,
    assessment,
    synthesis: synthesisRule(options.untracedNumber),
    memory: memoryExtract,
  };
  return Object.values(table);
}

export const defaultRules: ScriptedRule[] = scriptedRules();
