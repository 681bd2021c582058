/**
 * The Investigator is told the turn's `include_memory`, so with it false the planner reads no
 * remembered tested hypothesis either (activities/agents/investigator: `includeMemory`).
 */
import { useWorkflowEnvironment } from './support';

const { runTurn } = useWorkflowEnvironment();

test.each([true, false])('include_memory %s reaches proposeHypotheses', async (includeMemory) => {
  const run = await runTurn(
    { classifyVagueness: async () => ({ vagueness: 'high' }) },
    { input: { context: { include_memory: includeMemory, include_biomarkers: true } } },
  );
  expect(run.calls.only('proposeHypotheses').includeMemory).toBe(includeMemory);
});
