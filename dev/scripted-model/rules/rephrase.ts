import { AGENT_LABELS, type RoutableAgent } from '../../../contracts/steps';
import type { ScriptedRule } from '../types';
import { canonicalQuestion, readAnalysisAsk } from './analysis-ask';
import { userQuestion } from './user-question';

/**
 * Step 2 (seed 002): per-agent sub-questions, for the agents the call lists (main first). The Data
 * Science Agent always gets ONE narrow computation; the others get the user's question, focused on
 * their role. The answer names agents as the seed's prompt does ('Data Science Agent' …).
 */
export const rephrase: ScriptedRule<'rephrase'> = {
  step: 'rephrase',
  respond(req) {
    const question = userQuestion(req.inputs.messages);
    const ask = readAnalysisAsk(question);
    const forAgent = (agent: RoutableAgent) =>
      agent === 'data_science' && ask ? canonicalQuestion(ask) : `${question.replace(/\?*$/, '')}?`;
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
