/**
 * A model call refused by the user's cost cap (platform/cost-caps.ts) ends the turn at that step with
 * `cost_cap_exceeded`, never retried, even in the steps whose other failures the turn goes on without:
 * the Critic and the Assessment (a finding downgraded or unassessed) and the memory step (best-effort).
 */
import { ApplicationFailure } from '@temporalio/client';
import { AGENT, failed, routing, useWorkflowEnvironment, type ActivityName, type Fakes } from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

const MESSAGE =
  'The daily cost cap of $1 is reached: $1.02 spent today (UTC); it resets at 2026-11-28T00:00:00.000Z. ' +
  'The turn stopped after spending $0.31.';

/** What worker/upstream-failure-interceptor.ts makes of a CostCapExceededError. */
const costCapExceeded = () =>
  ApplicationFailure.create({
    type: 'CostCapExceededError',
    message: MESSAGE,
    details: [{ request_id: null, status: null }],
    nonRetryable: true,
  });

const specialist: Partial<Fakes> = {
  route: async () => routing(HC, [DS, DE]),
  reflect: async () => ({ dataScience: null, domainExpert: null }),
};

test.each<[ActivityName, Partial<Fakes>]>([
  ['classifyVagueness', specialist],
  ['synthesise', specialist],
  ['critiqueFinding', specialist],
  ['assessFinding', specialist],
  ['rememberTurn', specialist],
  ['rememberTurn', { route: async () => routing('') }],
])('%s refused by a cost cap: failTurn cost_cap_exceeded, the turn does not complete', async (step, scenario) => {
  const run = await runTurn({
    ...scenario,
    [step]: async () => {
      throw costCapExceeded();
    },
  });
  expect(run.calls.count(step)).toBeGreaterThan(0);
  const error = failed(run);
  expect({ type: error.type, nonRetryable: error.nonRetryable }).toEqual({
    type: 'cost_cap_exceeded',
    nonRetryable: true,
  });
  expect(run.calls.only('failTurn').error).toEqual({
    code: 'cost_cap_exceeded',
    message: `Step ${step} failed: ${MESSAGE}`,
    request_id: '',
    docs_url: 'https://docs.amy.health/concepts/errors#cost_cap_exceeded',
  });
  expect(run.calls.names).not.toContain('completeTurn');
  expect(run.calls.names).not.toContain('recordCriticFallback');
});
