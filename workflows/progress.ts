import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { agentOfStep, type AgentName, type StepId } from '../contracts/steps';
import { progressQuery, type WorkflowProgress } from './definitions';

/**
 * Runs one step of the turn, keeping the `progress` query's answer current. A step that runs again
 * (the debug loop, a second invocation of an agent, the critic per finding) is listed once per run.
 */
export type StepRunner = <T>(step: StepId, run: () => Promise<T>) => Promise<T>;

/**
 * Only query-handler data changes here (the `progress` query, and the "current details" the Temporal
 * Web UI shows on the workflow's page): no activities, timers or ordering, so histories recorded
 * before either existed still replay.
 */
export function trackProgress(): StepRunner {
  const running: StepId[] = [];
  const completed: StepId[] = [];
  const agents: AgentName[] = [];
  setHandler(progressQuery, (): WorkflowProgress => ({
    current_step: running.at(-1) ?? null,
    completed_steps: [...completed],
    agents_started: [...agents],
  }));
  const showDetails = () =>
    setCurrentDetails(`**Running:** ${running.join(', ') || '—'}\n\n**Done:** ${completed.join(' → ') || '—'}`);
  return async (name, run) => {
    running.push(name);
    showDetails();
    const agent = agentOfStep(name);
    if (agent && !agents.includes(agent)) agents.push(agent);
    try {
      const result = await run();
      completed.push(name);
      return result;
    } finally {
      running.splice(running.lastIndexOf(name), 1);
      showDetails();
    }
  };
}
