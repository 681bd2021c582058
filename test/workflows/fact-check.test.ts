/**
 * The binding fact-check in the workflow: whichever step wrote the answer (synthesis, the fallback
 * reply, the Investigator's `checkAnswer`), the answer it returns after the check is the one remembered
 * and completed, and its outcome reaches `completeTurn` as the Turn's `result.fact_check`. The repair
 * runs inside those activities: the workflow schedules no activity it did not schedule before.
 */
import type { FactCheckOutcome } from '../../contracts/turn';
import { CLEAN_FACT_CHECK, routing, useWorkflowEnvironment } from './support';

const { runTurn } = useWorkflowEnvironment();

const REPAIRED: FactCheckOutcome = {
  numbers_checked: 3,
  issues: [{ value: 58, severity: 'warn' }],
  repairs: {
    resynthesised: true,
    removed: [{ value: 58, sentence: 'That is 58 bpm.', action: 'dropped_sentence' }],
  },
};

test('a specialist turn: the checked answer and the outcome synthesis returns are completed and remembered', async () => {
  const run = await runTurn({
    synthesise: async () => ({ answer: 'Checked answer.', factSheet: [], factCheck: REPAIRED }),
  });
  expect(run.calls.names.slice(-3)).toEqual(['synthesise', 'rememberTurn', 'completeTurn']);
  expect(run.calls.only('completeTurn')).toMatchObject({ answer: 'Checked answer.', factCheck: REPAIRED });
  expect(run.calls.only('rememberTurn').answer).toBe('Checked answer.');
});

test('the fallback: its checked reply and outcome are completed', async () => {
  const run = await runTurn({
    route: async () => routing(''),
    replyConversationally: async () => ({ answer: 'Checked reply.', factCheck: REPAIRED }),
  });
  expect(run.calls.only('completeTurn')).toMatchObject({ answer: 'Checked reply.', factCheck: REPAIRED });
  expect(run.calls.only('rememberTurn').answer).toBe('Checked reply.');
});

test("the Investigator: checkAnswer's briefing, with untraced numbers removed, is the answer", async () => {
  const run = await runTurn({
    classifyVagueness: async () => ({ vagueness: 'high' }),
    checkAnswer: async () => ({ answer: 'Checked briefing.', factSheet: [], factCheck: REPAIRED }),
  });
  expect(run.calls.only('checkAnswer').answer).toMatch(/^Briefing on/);
  expect(run.calls.only('completeTurn')).toMatchObject({ answer: 'Checked briefing.', factCheck: REPAIRED });
  expect(run.calls.only('rememberTurn').answer).toBe('Checked briefing.');
});

test('a clean check is passed on as it is', async () => {
  const run = await runTurn({});
  expect(run.calls.only('completeTurn').factCheck).toEqual(CLEAN_FACT_CHECK);
});
