import { createAssessFinding } from './assessment';
import { createClassifyVagueness } from './classify-vagueness';
import { createCritiqueFinding } from './critic';
import { createReplyConversationally } from './fallback-reply';
import { createRephraseQuestions } from './rephrase';
import { createRoute } from './route';
import type { StepDeps } from './step-deps';
import { createSynthesise } from './synthesis';
import { createTurnLifecycle } from './turn-lifecycle';

export type { StepDeps, ModelSettings } from './step-deps';

/** Every activity the turn workflow can schedule, bound to its dependencies. */
export function createActivities(deps: StepDeps) {
  return {
    ...createTurnLifecycle(deps),
    classifyVagueness: createClassifyVagueness(deps),
    route: createRoute(deps),
    rephraseQuestions: createRephraseQuestions(deps),
    replyConversationally: createReplyConversationally(deps),
    critiqueFinding: createCritiqueFinding(deps),
    assessFinding: createAssessFinding(deps),
    synthesise: createSynthesise(deps),
  };
}

export type TurnActivities = ReturnType<typeof createActivities>;
