import type { ScriptedRule } from '../types';
import { specSentence } from '../language/canonical';
import { understand } from '../language/understand-question';
import { AGENT_LABELS } from '../../../contracts/steps';
import { plainText } from './user-question';

/**
 * Step 5: NO, the common case, unless the user asks for a number to be checked against
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
    const spec = wantsCheck ? understand([{ role: 'user', content: question }]).spec : null;
    if (!spec) return { text: JSON.stringify({ decision: 'NO', reflection_questions: {} }) };
    return {
      text: JSON.stringify({
        decision: 'YES',
        // The model names agents by their labels (AGENT_LABELS).
        reflection_questions: {
          // A check of a number is against the recent past when the question gives no window.
          [AGENT_LABELS.data_science]: specSentence(
            'days' in spec.window && spec.window.days === null ? { ...spec, window: { days: 90 } } : spec,
          ),
        },
      }),
    };
  },
};
