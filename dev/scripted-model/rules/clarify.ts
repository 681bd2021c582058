import { ambiguityOf } from '../language/ambiguity';
import type { ScriptedRule } from '../types';

/**
 * Asking back (activities/steps/clarify): the question worth asking when the user's question reads more than one
 * way (../language/ambiguity.ts), else `{"ambiguous": false}`. Only a turn whose request accepts clarification
 * questions makes this call.
 */
export const clarify: ScriptedRule<'clarify'> = {
  step: 'clarify',
  respond(req) {
    const ambiguity = ambiguityOf(req.inputs.messages);
    if (!ambiguity) return { text: JSON.stringify({ ambiguous: false }) };
    return {
      text: JSON.stringify({
        ambiguous: true,
        about: ambiguity.about,
        question: ambiguity.question,
        options: ambiguity.options,
        likely_option_id: ambiguity.likelyOptionId,
        free_text: ambiguity.freeText,
      }),
    };
  },
};
