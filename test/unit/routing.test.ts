import { sanitiseRouting } from '../../activities/steps/routing';

describe('sanitiseRouting', () => {
  test.each([
    ['DS Agent', 'Data Science Agent'],
    ['ds', 'Data Science Agent'],
    ['data scientist', 'Data Science Agent'],
    ['domain expert', 'Domain Expert Agent'],
    ['DE', 'Domain Expert Agent'],
    ['coach', 'Health Coach Agent'],
    ['Health_Coach', 'Health Coach Agent'],
  ])('canonicalises the main agent alias %p', (alias, canonical) => {
    expect(sanitiseRouting({ main_agent: alias, supporting_agents: '', collaboration_workflow: '' }).main_agent).toBe(
      canonical,
    );
  });

  test('an unknown or empty main agent means the conversational fallback', () => {
    for (const main of ['', 'Nutritionist Agent', 'Investigator']) {
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
    expect(routing.supporting_agents).toEqual(['Data Science Agent', 'Domain Expert Agent']);
  });

  test('accepts supporting agents as a list', () => {
    const routing = sanitiseRouting({
      main_agent: 'Domain Expert Agent',
      supporting_agents: ['DS Agent', 'Domain Expert Agent'],
      collaboration_workflow: '',
    });
    expect(routing.supporting_agents).toEqual(['Data Science Agent']);
  });
});
