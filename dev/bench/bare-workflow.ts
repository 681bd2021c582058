/**
 * The floor for a turn: a workflow that does nothing but schedule one no-op activity per activity the
 * turn scheduled, one after the other, in the same order. The steps are an input, read off a recorded
 * turn's history by the measurement, so the floor has the turn's shape whichever path the turn took.
 * Its duration is what Temporal alone costs for that shape, so the turn's duration divided by it is our
 * overhead. Bundled into a worker of its own, like the turn workflow, so it may import workflow APIs only.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface BareActivities {
  /** Does nothing: the work of the step it stands in for is exactly what the baseline leaves out. */
  noOp(step: string): Promise<void>;
}

const { noOp } = proxyActivities<BareActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

/** `steps`: the activity types the turn scheduled, in order; only their number shapes the history. */
export async function BareWorkflow(steps: string[]): Promise<void> {
  for (const step of steps) await noOp(step);
}
