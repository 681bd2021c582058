import type { ScriptedRule } from '../types';
import { userQuestion } from './user-question';

/**
 * Step 0 (seed 002): `low | medium | high`, biased to `low`. `high` sends the turn to the
 * Investigator, so it is reserved for questions with no anchor at all.
 */

/** Open-ended asks about the user's data as a whole. */
const ANCHORLESS_ASKS: RegExp[] = [
  /\banything (interesting|notable|unusual|important|surprising|new)\b/,
  /\banything (i should|to) (worry|know|be worried|be concerned)\b/,
  /\banything (stand(s|ing)? out|worth (knowing|noting|looking at))\b/,
  /\bwhat should i know about my (health|data|health data)\b/,
  /\bwhat('s| is) (interesting|notable|going on|new) (in|with) my (health|data|health data)\b/,
  /\bany (interesting )?(patterns|insights|trends|findings) in my (health|data|health data)\b/,
  /\b(tell me|show me) something (interesting )?about my (health|data|health data)\b/,
  /\bsurprise me\b/,
];

/** Named metrics, labs and activities: any of these anchors a question. */
const ANCHORS =
  /\b(sleep|slept|rem|steps?|walk(ing)?|heart rate|rhr|hrv|variability|stress|active zone|workouts?|exercise|run(ning)?|cycling|swim(ming)?|weight|bmi|vo2|calories|ldl|hdl|cholesterol|triglycerides|glucose|a1c|hba1c|blood pressure|vitamin|ferritin|biomarkers?|labs?)\b/;

export const classifyVagueness: ScriptedRule<'classify_vagueness'> = {
  step: 'classify_vagueness',
  respond(req) {
    const question = userQuestion(req.inputs.messages).toLowerCase();
    if (!ANCHORLESS_ASKS.some((ask) => ask.test(question))) return { text: 'low' };
    // An open-ended ask about a named metric ("anything interesting in my sleep?") has an anchor.
    return { text: ANCHORS.test(question) ? 'medium' : 'high' };
  },
};
