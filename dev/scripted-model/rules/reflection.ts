import type { ScriptedRule } from '../types';
import { canonicalQuestion, readAnalysisAsk } from './analysis-ask';
import { AGENT_LABELS } from '../../../contracts/steps';
import { plainText } from './user-question';

/**
 * Step 5 (seed 002): NO, the common case, unless the user asks for a number to be checked against
 * their own data ("double-check", "verify", "compare with my data") and names a metric the Data
 * Science agent can compute: then YES, with one narrow computation for it.
 */
export const reflection: ScriptedRule<'reflection'> = {
  step: 'reflection',
  respond(req) {
    const question = plainText(req.inputs.userMessage);
    const wantsCheck = /\b(double[- ]check|verify|cross[- ]check|compare (it )?(with|against) my data)\b/i.test(
      question,
    );
    const ask = wantsCheck ? readAnalysisAsk(question) : null;
    if (!ask) return { text: JSON.stringify({ decision: 'NO', reflection_questions: {} }) };
    return {
      text: JSON.stringify({
        decision: 'YES',
        // The model names agents as the seed's prompt does.
        reflection_questions: {
          [AGENT_LABELS.data_science]: canonicalQuestion({ ...ask, windowDays: ask.windowDays ?? 90 }),
        },
      }),
    };
  },
};
