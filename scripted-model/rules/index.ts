import type { ScriptedRule } from '../types';
import { assessment } from './assessment';
import { classifyVagueness } from './classify-vagueness';
import { critic } from './critic';
import { fallbackReply } from './fallback-reply';
import { rephrase } from './rephrase';
import { route } from './route';
import { synthesis } from './synthesis';

/** Every step the scripted model can answer, one module per step. A step missing here gets a 400. */
export const defaultRules: ScriptedRule[] = [
  classifyVagueness,
  route,
  rephrase,
  synthesis,
  critic,
  assessment,
  fallbackReply,
];
