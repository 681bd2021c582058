import type { ScriptedRule } from '../types';
import { canonicalQuestion, readAnalysisAsk } from './analysis-ask';
import { userQuestion } from './user-question';

/** The agents the rephrase prompt lists after `Agents:` (one per line, `- <name>`). */
function listedAgents(text: string): string[] {
  const block = /^Agents:\n((?:- .+\n?)+)/m.exec(text);
  return block
    ? block[1]
        .split('\n')
        .filter(Boolean)
        .map((line) => line.slice(2).trim())
    : [];
}

/**
 * Step 2 (seed 002): per-agent sub-questions. The Data Science Agent always gets ONE narrow
 * computation; the others get the user's question, focused on their role.
 */
export const rephrase: ScriptedRule<'rephrase'> = {
  step: 'rephrase',
  respond(req) {
    const question = userQuestion(req);
    const agents = listedAgents(req.lastUserText);
    const ask = readAnalysisAsk(question);
    const forAgent = (agent: string) =>
      agent === 'Data Science Agent' && ask ? canonicalQuestion(ask) : `${question.replace(/\?*$/, '')}?`;
    const [main, ...supporting] = agents;
    return {
      text: JSON.stringify({
        main_agent_question: main ? forAgent(main) : question,
        supporting_agent_questions: Object.fromEntries(supporting.map((agent) => [agent, forAgent(agent)])),
      }),
    };
  },
};
