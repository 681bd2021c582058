import { createAssessFinding } from './steps/assessment';
import { createClassifyVagueness } from './steps/classify-vagueness';
import { createClarify } from './steps/clarify';
import { createCritiqueFinding, createRecordCriticFallback } from './steps/critic';
import { createDataScienceActivities } from './agents/data-science';
import { createConsultDomainExpert } from './agents/domain-expert';
import { createReplyConversationally } from './steps/fallback-reply';
import { createCoachUser } from './agents/health-coach';
import { createInvestigatorActivities } from './agents/investigator';
import { createRecallMemory, createRememberTurn } from './steps/memory';
import { createReflect } from './steps/reflection';
import { createReconcileAbandonedTurns } from './bookkeeping/reconcile-turns';
import { createPurgeExpiredTurnEvents } from './bookkeeping/retention';
import { createRephraseQuestions } from './steps/rephrase';
import { createRoute } from './steps/route';
import type { StepDeps } from './runtime/step-deps';
import { createSynthesise } from './steps/synthesis';
import { createCheckAnswer } from './steps/check-answer';
import { createTurnLifecycle } from './bookkeeping/turn-lifecycle';
import { createTurnInput } from './bookkeeping/turn-input';
import { createRunGates } from './steps/run-gates';

export type { StepDeps } from './runtime/step-deps';

/** Every activity the workflows can schedule (the turn workflow and retention), bound to its dependencies. */
export function createActivities(deps: StepDeps) {
  return {
    ...createTurnLifecycle(deps),
    ...createTurnInput(deps),
    classifyVagueness: createClassifyVagueness(deps),
    clarify: createClarify(deps),
    route: createRoute(deps),
    rephraseQuestions: createRephraseQuestions(deps),
    replyConversationally: createReplyConversationally(deps),
    ...createDataScienceActivities(deps),
    runGates: createRunGates(deps),
    consultDomainExpert: createConsultDomainExpert(deps),
    coachUser: createCoachUser(deps),
    reflect: createReflect(deps),
    critiqueFinding: createCritiqueFinding(deps),
    recordCriticFallback: createRecordCriticFallback(deps),
    assessFinding: createAssessFinding(deps),
    synthesise: createSynthesise(deps),
    checkAnswer: createCheckAnswer(deps),
    ...createInvestigatorActivities(deps),
    recallMemory: createRecallMemory(deps),
    rememberTurn: createRememberTurn(deps),
    purgeExpiredTurnEvents: createPurgeExpiredTurnEvents(deps),
    reconcileAbandonedTurns: createReconcileAbandonedTurns(deps),
  };
}

export type TurnActivities = ReturnType<typeof createActivities>;
