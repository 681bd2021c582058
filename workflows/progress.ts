import { setHandler } from '@temporalio/workflow';
import { progressQuery, type TurnProgress } from './definitions';

/** Runs one named step of the turn, keeping the `progress` query's answer current. */
export type StepRunner = <T>(name: string, run: () => Promise<T>) => Promise<T>;

export function trackProgress(): StepRunner {
  const progress: TurnProgress = { current_step: null, completed_steps: [] };
  setHandler(progressQuery, () => progress);
  return async (name, run) => {
    progress.current_step = name;
    const result = await run();
    progress.completed_steps.push(name);
    progress.current_step = null;
    return result;
  };
}
