/**
 * The baseline for the fallback turn: a workflow that does nothing but schedule the same activities, in
 * the same order, as the turn workflow's fallback path (workflows/turn-workflow.ts). Its duration is
 * what Temporal alone costs for that shape, so the turn's duration divided by it is our overhead.
 * Bundled into a worker of its own, like the turn workflow, so it may import workflow APIs only.
 */
import { proxyActivities } from '@temporalio/workflow';

/** The activities TurnWorkflow schedules on the fallback path, in order. */
export const FALLBACK_PATH_ACTIVITIES = [
  'startTurn',
  'classifyVagueness',
  'route',
  'replyConversationally',
  'completeTurn',
] as const;

export interface BareActivities {
  /** Does nothing: the work of the step it stands in for is exactly what the baseline leaves out. */
  noOp(step: string): Promise<void>;
}

const { noOp } = proxyActivities<BareActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

export async function BareWorkflow(): Promise<void> {
  for (const step of FALLBACK_PATH_ACTIVITIES) await noOp(step);
}
