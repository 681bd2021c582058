import { createAssessFinding } from './assessment';
import { createClassifyVagueness } from './classify-vagueness';
import { createCritiqueFinding } from './critic';
import { createDataScienceActivities } from './data-science';
import { createReplyConversationally } from './fallback-reply';
import { createRememberTurn } from './memory-step';
import { createRephraseQuestions } from './rephrase';
import { createRoute } from './route';
import type { StepDeps } from './step-deps';
import { createSynthesise } from './synthesis';
import { createTurnLifecycle } from './turn-lifecycle';
import { createRunGates } from './validation';

export type { StepDeps, ModelSettings } from './step-deps';

/** Every activity the turn workflow can schedule, bound to its dependencies. */
export function createActivities(deps: StepDeps) {
  return {
    ...createTurnLifecycle(deps),
    classifyVagueness: createClassifyVagueness(deps),
    route: createRoute(deps),
    rephraseQuestions: createRephraseQuestions(deps),
    replyConversationally: createReplyConversationally(deps),
    ...createDataScienceActivities(deps),
    runGates: createRunGates(deps),
    critiqueFinding: createCritiqueFinding(deps),
    assessFinding: createAssessFinding(deps),
    synthesise: createSynthesise(deps),
    rememberTurn: createRememberTurn(deps),
  };
}

export type TurnActivities = ReturnType<typeof createActivities>;
