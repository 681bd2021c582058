/**
 * The steps that decide a turn has no data to compute from (docs/design.md#no-data-to-compute-from), each
 * through its real activity against Postgres and the scripted model: with no daily summaries in the turn's
 * snapshot, the Data Science plan and code make no model call and the run refuses, not debuggable; synthesis
 * after a failed Data Science run answers with the no-data reply, with no model call and an empty fact sheet.
 */
import { createPlanAnalysis } from '../../activities/agents/data-science/plan';
import { createWriteAnalysisCode } from '../../activities/agents/data-science/code';
import { createRunAnalysis } from '../../activities/agents/data-science/run';
import { createSynthesise, type SynthesisInput } from '../../activities/steps/synthesis';
import { readTurnDataCounts, readTurnHealthData } from '../../platform/health-data/snapshot';
import { startStepHarness, type StepHarness } from '../support/step-harness';

let h: StepHarness;
beforeAll(async () => {
  h = await startStepHarness();
});
afterAll(async () => {
  await h?.close();
});

const QUESTION = 'What is my average resting heart rate over the last 90 days?';

/** A running turn of a new user, who has no rows of any table. */
async function emptyTurn(): Promise<{ turnId: string; userId: string }> {
  const turnId = await h.newTurn();
  const { rows } = await h.deps.pool.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [turnId]);
  return { turnId, userId: rows[0].user_id };
}

async function modelCalls(turnId: string): Promise<string[]> {
  const { rows } = await h.deps.pool.query<{ step: string }>('SELECT step FROM llm_calls WHERE turn_id = $1', [turnId]);
  return rows.map((r) => r.step);
}

const synthesisInput = (turnId: string, dataScienceFailed: boolean): SynthesisInput => ({
  turnId,
  userMessage: QUESTION,
  mainAgent: 'data_science',
  mainAgentDraft: '',
  supportingInsights: '',
  expertProse: '',
  findings: [],
  anchors: [],
  dataScienceFailed,
});

test('Data Science on an empty snapshot: no plan or code from the model, and the run refuses, not debuggable', async () => {
  const { turnId, userId } = await emptyTurn();
  const planned = await h.run(createPlanAnalysis(h.deps), { turnId, userId, question: QUESTION, invocation: 'main' });
  expect(planned.costUsd).toBe(0);
  const written = await h.run(createWriteAnalysisCode(h.deps), {
    turnId,
    invocation: 'main',
    question: QUESTION,
    plan: planned.plan,
  });
  expect(written.costUsd).toBe(0);
  const run = await h.run(createRunAnalysis(h.deps), { turnId, userId, invocation: 'main', code: written.code });
  expect(run).toMatchObject({ status: 'error', kind: 'no_data', debuggable: false });
  expect(await modelCalls(turnId)).toEqual([]);
  expect(await readTurnDataCounts(h.deps.pool, turnId)).toEqual({
    daily: 0,
    workouts: 0,
    labs: 0,
    profile: false,
    labsWithheld: false,
  });
});

test('synthesis after a failed Data Science run over an empty snapshot is the no-data reply, with no model call', async () => {
  const { turnId, userId } = await emptyTurn();
  await readTurnHealthData(h.deps.pool, { turnId, userId });
  const out = await h.run(createSynthesise(h.deps), synthesisInput(turnId, true));
  expect(out.answer).toMatch(/haven't uploaded any health data[\s\S]*POST \/v1\/data\/daily/);
  expect(out.factSheet).toEqual([]);
  expect(out.factCheck).toEqual({ numbers_checked: 0, issues: [], repairs: { resynthesised: false, removed: [] } });
  expect(await modelCalls(turnId)).toEqual([]);
  const thoughts = (await h.deps.events.readAfter(turnId, 0)).filter((e) => e.type === 'agent.thought');
  expect(thoughts.map((e) => e.data.delta).join('')).toBe(out.answer);
});

test('synthesis is written by the model as before when no step read the data, or Data Science did not fail', async () => {
  const unread = await emptyTurn();
  await h.run(createSynthesise(h.deps), synthesisInput(unread.turnId, true));
  expect(await modelCalls(unread.turnId)).toEqual(['synthesis']);

  const read = await emptyTurn();
  await readTurnHealthData(h.deps.pool, read);
  await h.run(createSynthesise(h.deps), synthesisInput(read.turnId, false));
  expect(await modelCalls(read.turnId)).toEqual(['synthesis']);
});
