import type { ScriptedRule } from '../types';
import { assessment } from './assessment';
import { classifyVagueness } from './classify-vagueness';
import { critic } from './critic';
import { dataScienceRules, type BrokenCodeMode } from './data-science';
import { domainExpert } from './domain-expert';
import { fallbackReply } from './fallback-reply';
import { healthCoachRules } from './health-coach';
import { investigatorRules } from './investigator';
import { memoryExtract } from './memory-extract';
import { reflection } from './reflection';
import { rephrase } from './rephrase';
import { route } from './route';
import { synthesis } from './synthesis';

/**
 * Every step the scripted model can answer, one module per step. A step missing here gets a 400.
 * `brokenCode` makes the Data Science code step fail first (`first`) or always (`always`).
 */
export function scriptedRules(options: { brokenCode?: BrokenCodeMode } = {}): ScriptedRule[] {
  return [
    classifyVagueness,
    route,
    rephrase,
    ...dataScienceRules(options),
    domainExpert,
    ...healthCoachRules,
    reflection,
    memoryExtract,
    ...investigatorRules,
    synthesis,
    critic,
    assessment,
    fallbackReply,
  ];
}

export const defaultRules: ScriptedRule[] = scriptedRules();
