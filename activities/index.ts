import { createAssessFinding } from './assessment';
import { createClassifyVagueness } from './classify-vagueness';
import { createCritiqueFinding } from './critic';
import { createDataScienceActivities } from './data-science';
import { createConsultDomainExpert } from './domain-expert';
import { createReplyConversationally } from './fallback-reply';
import { createCoachUser } from './health-coach';
import { createInvestigatorActivities } from './investigator';
import { createRecallMemory, createRememberTurn } from './memory-step';
import { createReflect } from './reflect';
import { createPurgeExpiredTurnEvents } from './retention';
import { createRephraseQuestions } from './rephrase';
import { createRoute } from './route';
import type { StepDeps } from './step-deps';
import { createCheckAnswer, createSynthesise } from './synthesis';
import { createTurnLifecycle } from './turn-lifecycle';
import { createRunGates } from './validation';

export type { StepDeps, ModelSettings } from './step-deps';

/** Every activity the workflows can schedule (the turn workflow and retention), bound to its dependencies. */
export function createActivities(deps: StepDeps) {
  return {
    ...createTurnLifecycle(deps),
    classifyVagueness: createClassifyVagueness(deps),
    route: createRoute(deps),
    rephraseQuestions: createRephraseQuestions(deps),
    replyConversationally: createReplyConversationally(deps),
    ...createDataScienceActivities(deps),
    runGates: createRunGates(deps),
    consultDomainExpert: createConsultDomainExpert(deps),
    coachUser: createCoachUser(deps),
    reflect: createReflect(deps),
    critiqueFinding: createCritiqueFinding(deps),
    assessFinding: createAssessFinding(deps),
    synthesise: createSynthesise(deps),
    checkAnswer: createCheckAnswer(deps),
    ...createInvestigatorActivities(deps),
    recallMemory: createRecallMemory(deps),
    rememberTurn: createRememberTurn(deps),
    purgeExpiredTurnEvents: createPurgeExpiredTurnEvents(deps),
  };
}

export type TurnActivities = ReturnType<typeof createActivities>;
