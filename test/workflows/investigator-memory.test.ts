/**
 * The Investigator is told the turn's `include_memory`, so with it false the planner reads no
 * remembered tested hypothesis either (activities/agents/investigator: `includeMemory`); and its
 * `include_biomarkers`, so with it false it reads none about a lab biomarker, as the memory recall does.
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

test.each([true, false])('include_biomarkers %s reaches the memory recall and proposeHypotheses', async (included) => {
  const run = await runTurn(
    { classifyVagueness: async () => ({ vagueness: 'high' }) },
    { input: { context: { include_memory: true, include_biomarkers: included } } },
  );
  expect(run.calls.only('recallMemory').includeBiomarkers).toBe(included);
  expect(run.calls.only('proposeHypotheses').includeBiomarkers).toBe(included);
});
