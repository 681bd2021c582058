import { understand, asksOpenEnded } from '../language/understand-question';
import type { ScriptedRule } from '../types';

/**
 * Step 0: `low | medium | high`, biased to `low`. `high` sends the turn to the Investigator,
 * so it is kept for open-ended asks with no anchor at all (the language layer's `investigate`); an
 * open-ended ask about a named metric ("anything interesting in my sleep?") is `medium`.
 */
export const classifyVagueness: ScriptedRule<'classify_vagueness'> = {
  step: 'classify_vagueness',
  respond(req) {
    const { pattern } = understand(req.inputs.messages);
    if (pattern === 'investigate') return { text: 'high' };
    return { text: asksOpenEnded(req.inputs.messages) ? 'medium' : 'low' };
  },
};
