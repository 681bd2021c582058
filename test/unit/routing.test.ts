import { sanitiseRouting } from '../../activities/steps/route/sanitise-routing';

/** The model names agents by their labels (AGENT_LABELS); past the parser, the turn uses agent ids. */
describe('sanitiseRouting', () => {
  test.each([
    ['Data Science Agent', 'data_science'],
    ['DS Agent', 'data_science'],
    ['ds', 'data_science'],
    ['data scientist', 'data_science'],
    ['Domain Expert Agent', 'domain_expert'],
    ['domain expert', 'domain_expert'],
    ['DE', 'domain_expert'],
    ['Health Coach Agent', 'health_coach'],
    ['coach', 'health_coach'],
    ['Health_Coach', 'health_coach'],
  ])('maps the main agent %p to its id', (alias, id) => {
    expect(sanitiseRouting({ main_agent: alias, supporting_agents: '', collaboration_workflow: '' }).main_agent).toBe(
      id,
    );
  });

  test('an unknown or empty main agent means the conversational fallback', () => {
    // The model's words: a name every object has as a property (`constructor`) is no agent either.
    for (const main of ['', 'Nutritionist Agent', 'Investigator', 'constructor', 'toString', '__proto__']) {
      expect(sanitiseRouting({ main_agent: main, supporting_agents: 'ds', collaboration_workflow: 'x' })).toEqual({
        main_agent: '',
        supporting_agents: [],
        collaboration_workflow: '',
      });
    }
  });

  test('supporting agents: aliases canonicalised, garbage, duplicates, the coach and the main agent dropped', () => {
    const routing = sanitiseRouting({
      main_agent: 'Health Coach Agent',
      supporting_agents: 'ds; Data Science Agent; wizard; coach, domain expert',
      collaboration_workflow: 'DS computes, DE adds context, HC guides',
    });
    expect(routing.supporting_agents).toEqual(['data_science', 'domain_expert']);
  });

  test('accepts supporting agents as a list', () => {
    const routing = sanitiseRouting({
      main_agent: 'Domain Expert Agent',
      supporting_agents: ['DS Agent', 'Domain Expert Agent'],
      collaboration_workflow: '',
    });
    expect(routing.supporting_agents).toEqual(['data_science']);
  });
});
