import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { AgentName } from '../contracts/turn';
import { progressQuery, type TurnProgress } from './definitions';

/** Runs one named step of the turn, keeping the `progress` query's answer current. */
export type StepRunner = <T>(name: string, run: () => Promise<T>) => Promise<T>;

/** Which agent a step belongs to, from the step names the workflows use; null for the turn's own steps. */
export function agentOfStep(name: string): AgentName | null {
  if (name.startsWith('ds_')) return 'data_science';
  if (name.startsWith('domain_expert_')) return 'domain_expert';
  if (name === 'health_coach') return 'health_coach';
  if (name.startsWith('investigator_')) return 'investigator';
  return null;
}

/**
 * Only query-handler data changes here (the `progress` query, and the "current details" the Temporal
 * Web UI shows on the workflow's page): no activities, timers or ordering, so histories recorded
 * before either existed still replay.
 */
export function trackProgress(): StepRunner {
  const running: string[] = [];
  const completed: string[] = [];
  const agents: AgentName[] = [];
  setHandler(progressQuery, (): TurnProgress => ({
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
