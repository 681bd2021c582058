import { AGENT_LABELS, type RoutableAgent } from '../../../contracts/steps';
import type { ScriptedRule } from '../types';
import { specSentence } from '../language/canonical';
import { understand } from '../language/understand-question';
import { userQuestion } from './user-question';

/**
 * Step 2: per-agent sub-questions, for the agents the call lists (main first). The Data
 * Science Agent gets ONE narrow computation, the spec the language layer reads in the conversation
 * (follow-ups included) as one sentence its rules read back; the others get the user's question. The
 * answer names agents by their labels (AGENT_LABELS) ('Data Science Agent' …).
 */
export const rephrase: ScriptedRule<'rephrase'> = {
  step: 'rephrase',
  respond(req) {
    const question = userQuestion(req.inputs.messages);
    const { spec } = understand(req.inputs.messages);
    const forAgent = (agent: RoutableAgent) =>
      agent === 'data_science' && spec ? specSentence(spec) : `${question.replace(/\?*$/, '')}?`;
    const [main, ...supporting] = req.inputs.agents;
    return {
      text: JSON.stringify({
        main_agent_question: main ? forAgent(main) : question,
        supporting_agent_questions: Object.fromEntries(
          supporting.map((agent) => [AGENT_LABELS[agent], forAgent(agent)]),
        ),
      }),
    };
  },
};
