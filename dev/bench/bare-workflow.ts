/**
 * The floor for a turn: a workflow that does nothing but run one no-op activity per activity the turn
 * scheduled and one no-op local activity per local activity it recorded, in the same order and with the
 * same overlaps. The steps are an input, read off a recorded turn's history by the measurement
 * (dev/bench/history-shape.ts), so the floor has the turn's shape whichever path the turn took. Its cost
 * (duration in (a) and (f), CPU in (g)) is what Temporal alone costs for that shape, so the turn's
 * divided by it is our overhead. Bundled into a worker of its own, like the turn workflow, so it may
 * import workflow APIs only.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { BareStep } from './history-shape';

export interface BareActivities {
  /** Does nothing: the work of the step it stands in for is exactly what the baseline leaves out. */
  noOp(step: string): Promise<void>;
}

const options = { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 1 } } as const;
const activity = proxyActivities<BareActivities>(options);
const local = proxyLocalActivities<BareActivities>(options);

/**
 * Each step starts once the steps it comes `after` are done, as the turn's did: one after another for a
 * turn whose steps never overlapped, side by side where the turn's did.
 */
export async function BareWorkflow(steps: BareStep[]): Promise<void> {
  const done: Array<Promise<void>> = [];
  for (const step of steps) {
    await Promise.all(step.after.map((i) => done[i]));
    done.push((step.kind === 'local' ? local : activity).noOp(step.type));
  }
  await Promise.all(done);
}
