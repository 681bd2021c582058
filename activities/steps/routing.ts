/**
 * Routing output and its sanitiser (seed 002, "Step 1b Routing"). The router model sometimes emits
 * aliases or misspellings; anything that is not one of the three routable agents is dropped, and a
 * main agent that does not survive means the conversational fallback — never a phantom agent.
 */
import { z } from 'zod';

export const ROUTABLE_AGENTS = ['Data Science Agent', 'Domain Expert Agent', 'Health Coach Agent'] as const;
export type RoutableAgent = (typeof ROUTABLE_AGENTS)[number];

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

const ALIASES: Record<string, RoutableAgent> = {
  'data science agent': 'Data Science Agent',
  'data science': 'Data Science Agent',
  'data scientist': 'Data Science Agent',
  'ds agent': 'Data Science Agent',
  ds: 'Data Science Agent',
  'domain expert agent': 'Domain Expert Agent',
  'domain expert': 'Domain Expert Agent',
  de: 'Domain Expert Agent',
  'health coach agent': 'Health Coach Agent',
  'health coach': 'Health Coach Agent',
  coach: 'Health Coach Agent',
  hc: 'Health Coach Agent',
};

export function canonicalAgent(name: string): RoutableAgent | null {
  const key = name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');
  return ALIASES[key] ?? null;
}

export function sanitiseRouting(raw: RawRouting): Routing {
  const main = canonicalAgent(raw.main_agent);
  if (main === null) return { main_agent: '', supporting_agents: [], collaboration_workflow: '' };
  const listed = Array.isArray(raw.supporting_agents) ? raw.supporting_agents : raw.supporting_agents.split(/[;,]/);
  const supporting: RoutableAgent[] = [];
  for (const name of listed) {
    const agent = canonicalAgent(name);
    // Only DS and DE can support; the coach is always main, and the main agent never supports itself.
    if (agent && agent !== 'Health Coach Agent' && agent !== main && !supporting.includes(agent))
      supporting.push(agent);
  }
  return { main_agent: main, supporting_agents: supporting, collaboration_workflow: raw.collaboration_workflow };
}
