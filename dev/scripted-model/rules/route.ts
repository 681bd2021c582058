import { AGENT_LABELS, type RoutableAgent } from '../../../contracts/steps';
import { PATTERN_ROUTES } from '../language/patterns';
import { understand } from '../language/understand-question';
import type { ScriptedRule } from '../types';

/**
 * Step 1b (docs/design.md#collaboration-patterns): the main agent and the supporting agents of the
 * pattern the language layer reads in the conversation (../language/understand-question.ts). Small talk, device
 * help, a metric the data does not hold and anything unreadable route to main_agent "" (the fallback
 * reply, which answers each of those). The answer names agents by their labels (AGENT_LABELS).
 */

const ROLE: Record<RoutableAgent, string> = {
  data_science: "computes from the user's data",
  domain_expert: 'adds clinical context',
  health_coach: 'guides',
};

function describeWorkflow(main: RoutableAgent | null, supporting: RoutableAgent[]): string {
  if (main === null) return 'No specialist needed: reply conversationally.';
  const steps = supporting.map((agent) => `${AGENT_LABELS[agent]} ${ROLE[agent]}`);
  const mainStep =
    main === 'data_science'
      ? `${AGENT_LABELS[main]} answers from the user's data`
      : `${AGENT_LABELS[main]} ${main === 'domain_expert' ? 'interprets' : ROLE[main]}`;
  return [...steps, mainStep].join('; ') + '.';
}

export const route: ScriptedRule<'route'> = {
  step: 'route',
  respond(req) {
    const { main, supporting } = PATTERN_ROUTES[understand(req.inputs.messages).pattern];
    return {
      text: JSON.stringify({
        main_agent: main === null ? '' : AGENT_LABELS[main],
        supporting_agents: main === null ? '' : supporting.map((agent) => AGENT_LABELS[agent]).join('; '),
        collaboration_workflow: describeWorkflow(main, main === null ? [] : supporting),
      }),
    };
  },
};
