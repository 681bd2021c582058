/**
 * Which way a turn went reaches its ending (`path` on completeTurn and failTurn), where the metrics count
 * turns by it (`amy_turns_ended_total`, docs/operations.md#metrics): the main agent routing chose, the
 * conversational fallback, the Investigator; none when the turn failed before its path was chosen.
 */
import { AGENT, hypothesis, modelOutputInvalid, routing, useWorkflowEnvironment, type Fakes } from './support';

const { runTurn } = useWorkflowEnvironment();
const { DS, DE, HC } = AGENT;

test.each([
  ['data_science', { route: async () => routing(DS) }],
  ['domain_expert', { route: async () => routing(DE, [DS]) }],
  ['health_coach', { route: async () => routing(HC, [DS, DE]) }],
  ['conversation', { route: async () => routing('') }],
  [
    'investigator',
    {
      classifyVagueness: async () => ({ vagueness: 'high' }),
      proposeHypotheses: async () => ({
        digest: 'Sleep down 20 min.',
        hypotheses: [hypothesis('h1')],
        costUsd: 0.01,
        startedAt: '2026-01-01T00:00:00.000Z',
      }),
    },
  ],
] satisfies Array<[string, Partial<Fakes>]>)('%s: the turn completes with its path', async (path, fakes) => {
  const run = await runTurn(fakes);
  expect(run.calls.only('completeTurn').path).toBe(path);
});

test('a turn that fails after routing fails with its path', async () => {
  const run = await runTurn({
    route: async () => routing(DE),
    consultDomainExpert: async () => {
      throw modelOutputInvalid();
    },
  });
  expect(run.calls.only('failTurn').path).toBe('domain_expert');
});

test('a turn that fails before its path was chosen fails without one', async () => {
  const run = await runTurn({
    classifyVagueness: async () => {
      throw modelOutputInvalid();
    },
  });
  expect(run.calls.only('failTurn')).not.toHaveProperty('path');
});
