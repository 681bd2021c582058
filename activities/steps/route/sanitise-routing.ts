/**
 * Routing output and its sanitiser (docs/design.md#step-1b-routing). This is the model boundary for agent
 * names: the router (and the rephrase and reflection models) name agents by their labels (AGENT_LABELS),
 * 'Data Science Agent' and so on, and everything past here uses the agent ids of contracts/steps.ts.
 * The model sometimes emits aliases or misspellings; anything that is not one of the three routable
 * agents is dropped, and a main agent that does not survive means the conversational fallback — never
 * a phantom agent.
 */
import { z } from 'zod';
import { ownValue } from '../../../contracts/own-keys';
import type { RoutableAgent } from '../../../contracts/steps';

export const rawRoutingSchema = z.object({
  main_agent: z.string(),
  supporting_agents: z.union([z.string(), z.array(z.string())]).default(''),
  collaboration_workflow: z.string().default(''),
});
export type RawRouting = z.infer<typeof rawRoutingSchema>;

export interface Routing {
  main_agent: RoutableAgent | '';
  supporting_agents: RoutableAgent[];
  collaboration_workflow: string;
}

/** What the model may call an agent, lower-cased with `_` and `-` as spaces: the agents' labels, and aliases. */
const ALIASES: Record<string, RoutableAgent> = {
  'data science agent': 'data_science',
  'data science': 'data_science',
  'data scientist': 'data_science',
  'ds agent': 'data_science',
  ds: 'data_science',
  'domain expert agent': 'domain_expert',
  'domain expert': 'domain_expert',
  de: 'domain_expert',
  'health coach agent': 'health_coach',
  'health coach': 'health_coach',
  coach: 'health_coach',
  hc: 'health_coach',
};

/** The routable agent a name from the model stands for, or null. */
export function canonicalAgent(name: string): RoutableAgent | null {
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
  return ownValue(ALIASES, key) ?? null;
}

export function sanitiseRouting(raw: RawRouting): Routing {
  const main = canonicalAgent(raw.main_agent);
  if (main === null) return { main_agent: '', supporting_agents: [], collaboration_workflow: '' };
  const listed = Array.isArray(raw.supporting_agents) ? raw.supporting_agents : raw.supporting_agents.split(/[;,]/);
  const supporting: RoutableAgent[] = [];
  for (const name of listed) {
    const agent = canonicalAgent(name);
    // Only DS and DE can support; the coach is always main, and the main agent never supports itself.
    if (agent && agent !== 'health_coach' && agent !== main && !supporting.includes(agent)) supporting.push(agent);
  }
  return { main_agent: main, supporting_agents: supporting, collaboration_workflow: raw.collaboration_workflow };
}
