import { createClassifyVagueness } from './classify-vagueness';
import { createReplyConversationally } from './fallback-reply';
import { createRoute } from './route';
import type { StepDeps } from './step-deps';
import { createTurnLifecycle } from './turn-lifecycle';

export type { StepDeps, ModelSettings } from './step-deps';

/** Every activity the turn workflow can schedule, bound to its dependencies. */
export function createActivities(deps: StepDeps) {
  return {
    ...createTurnLifecycle(deps),
    classifyVagueness: createClassifyVagueness(deps),
    route: createRoute(deps),
    replyConversationally: createReplyConversationally(deps),
  };
}

export type TurnActivities = ReturnType<typeof createActivities>;
