import type { ScriptedRule } from '../types';
import { userQuestion } from './user-question';

/**
 * Step 1b (seed 002, "Routing, the 6 patterns"): picks the main agent and the supporting agents.
 * Small talk, device help and anything unrecognised route to main_agent "" (the fallback reply).
 */

const DS = 'Data Science Agent';
const DE = 'Domain Expert Agent';
const HC = 'Health Coach Agent';

const METRICS =
  'sleep|deep sleep|rem|steps|step count|resting heart rate|heart rate|rhr|hrv|heart rate variability|stress|active zone minutes|workouts?|runs?|weight|vo2 ?max|calories|ldl|hdl|cholesterol|glucose|a1c|blood pressure|biomarkers?|labs?';

/**
 * Chit-chat about Amy herself and wearable/app trouble: checked first, since "what are you?" is not a
 * knowledge question and "my watch won't sync my sleep" is not a data question. Plain greetings and
 * thanks match no table below and fall through to the fallback reply as well.
 */
const SMALL_TALK_OR_DEVICE_HELP: RegExp[] = [
  /\b(who|what) are you\b/,
  /\bhow are you\b/,
  /\bwhat can you do\b/,
  /\b(sync|syncing|synced|pair|pairing|bluetooth|battery|charg(e|ing)|firmware|log ?in|password)\b/,
  /\b(watch|ring|tracker|band|device|app)\b.*\b(not working|won't|doesn't|isn't|broken|stuck|connect)/,
];

/** Wellness advice and goal setting (patterns 4-6). */
const COACHING: RegExp[] = [
  /\bhelp me\b/,
  /\bplan\b/,
  /\bgoals?\b/,
  /\badvi(c|s)e\b/,
  /\b(tips|suggestions?|recommendations?)\b/,
  /\bhow (can|do|should) i (improve|increase|reduce|lower|raise|start|build|get better)\b/,
  /\b(habits?|routines?|motivat\w*)\b/,
];

/** Health knowledge and interpretation (patterns 1 and 3). "what is my …" is a data question, not this. */
const KNOWLEDGE: RegExp[] = [
  /\bwhat (is|are|does|do)\b(?! my\b)/,
  /^(is|are)\b.*\b(high|low|normal|healthy|good|bad|ok|okay|concerning|dangerous|optimal)\b/,
  /\bworr(y|ied|ying)\b/,
  /\b(mean|means|meaning|explain)\b/,
  /\bwhy (is|are|does|do|am|would)\b/,
  /\bhow does\b/,
  /\b(research|studies|study|evidence)\b/,
  /\bnormal range\b/,
];

/** Clinical context: labs, conditions, medication (brings in the Domain Expert). */
const MEDICAL =
  /\b(ldl|hdl|cholesterol|triglycerides|glucose|a1c|hba1c|blood pressure|hypertension|diabet\w*|medications?|doctor|symptoms?|diagnos\w*|disease|condition|thyroid|apnea|arrhythmia|afib|biomarkers?|lab results?)\b/;

/**
 * The user's own measurements. Naming a number about themselves counts too: the forcing rule says
 * anything even a bit related to personal data brings the Data Science Agent in.
 */
const PERSONAL_DATA: RegExp[] = [
  /\bmy (data|numbers|results|readings|history|trends?|average|avg)\b/,
  /\bbased on my\b/,
  new RegExp(`\\bmy (${METRICS})\\b`),
  /\b(did|have|do) i (sleep|slept|walk|walked|run|ran|exercise|exercised|train|trained)\b/,
  /\b(my|i)\b.*\d/,
  // "Is an LDL of 124 something to worry about?": a measurement with its value is the user's own.
  new RegExp(`\\b(${METRICS})\\b[^.?!]*?\\b\\d`),
];

interface Routing {
  main_agent: string;
  supporting_agents: string[];
}

const matchesAny = (patterns: RegExp[], text: string) => patterns.some((p) => p.test(text));

function routeQuestion(question: string): Routing {
  if (matchesAny(SMALL_TALK_OR_DEVICE_HELP, question)) return { main_agent: '', supporting_agents: [] };
  const personal = matchesAny(PERSONAL_DATA, question);
  const medical = MEDICAL.test(question);
  if (matchesAny(COACHING, question)) {
    return { main_agent: HC, supporting_agents: [...(personal ? [DS] : []), ...(medical ? [DE] : [])] };
  }
  if (matchesAny(KNOWLEDGE, question) || medical) {
    return { main_agent: DE, supporting_agents: personal ? [DS] : [] };
  }
  if (personal) return { main_agent: DS, supporting_agents: [] };
  return { main_agent: '', supporting_agents: [] };
}

function describeWorkflow({ main_agent, supporting_agents }: Routing): string {
  if (main_agent === '') return 'No specialist needed: reply conversationally.';
  const steps = supporting_agents.map((agent) =>
    agent === DS ? `${DS} computes from the user's data` : `${DE} adds clinical context`,
  );
  const mainStep = { [DS]: `${DS} answers from the user's data`, [DE]: `${DE} interprets`, [HC]: `${HC} guides` };
  return [...steps, mainStep[main_agent as keyof typeof mainStep]].join('; ') + '.';
}

export const route: ScriptedRule<'route'> = {
  step: 'route',
  respond(req) {
    const routing = routeQuestion(userQuestion(req.inputs.messages).toLowerCase());
    return {
      text: JSON.stringify({
        main_agent: routing.main_agent,
        supporting_agents: routing.supporting_agents.join('; '),
        collaboration_workflow: describeWorkflow(routing),
      }),
    };
  },
};
