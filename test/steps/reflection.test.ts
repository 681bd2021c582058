/**
 * Step 5, reflection: NO is the common case; YES asks at most one follow-up of the Data
 * Science and the Domain Expert agents, never of the coach; an unusable answer means no follow-up.
 */
import { createReflect, type ReflectInput } from '../../activities/steps/reflection';
import { defaultRules } from '../../dev/scripted-model/rules';
import type { ScriptedRule } from '../../dev/scripted-model/types';
import { startStepHarness, type StepHarness } from '../support/step-harness';

let canned = '';
const cannedReflection: ScriptedRule = { step: 'reflection', respond: () => ({ text: canned }) };

let scripted: StepHarness;
let cannedHarness: StepHarness;
beforeAll(async () => {
  scripted = await startStepHarness({ rules: defaultRules });
  cannedHarness = await startStepHarness({ rules: [cannedReflection] });
});
afterAll(async () => {
  await scripted?.close();
  await cannedHarness?.close();
});

const input = (turnId: string, userMessage: string): ReflectInput => ({
  turnId,
  userMessage,
  mainDraft: 'An LDL of 124 mg/dL is borderline high.',
  supportingInsights: 'Data Science: The computation returned no numbers.',
});

test('the scripted reflection says NO unless the user asks for a check against their data', async () => {
  const turnId = await scripted.newTurn();
  const run = (message: string) => scripted.run(createReflect(scripted.deps), input(turnId, message));
  expect(await run('Is an LDL of 124 something to worry about?')).toEqual({ dataScience: null, domainExpert: null });
  expect(await run('My resting heart rate is 70, is that bad? Please double-check it against my data.')).toEqual({
    dataScience: 'Compute the mean of resting_heart_rate over the last 90 days.',
    domainExpert: null,
  });
});

test.each([
  [
    'YES keeps one question per agent, the first, by any alias',
    { decision: 'YES', reflection_questions: { ds: 'Compute the mean of steps.', 'Domain Expert': 'Is 70 normal?' } },
    { dataScience: 'Compute the mean of steps.', domainExpert: 'Is 70 normal?' },
  ],
  [
    'the coach is never a follow-up agent',
    { decision: 'YES', reflection_questions: { 'Health Coach Agent': 'Make a plan.' } },
    { dataScience: null, domainExpert: null },
  ],
  [
    'NO asks nothing, whatever questions come with it',
    { decision: 'NO', reflection_questions: { 'Data Science Agent': 'Compute the mean of steps.' } },
    { dataScience: null, domainExpert: null },
  ],
])('%s', async (_case, answer, expected) => {
  canned = JSON.stringify(answer);
  const turnId = await cannedHarness.newTurn();
  expect(await cannedHarness.run(createReflect(cannedHarness.deps), input(turnId, 'Is 70 ok?'))).toEqual(expected);
});

test('an answer that is not JSON means no follow-up, not a failed turn', async () => {
  canned = 'I think the data scientist should look again.';
  const turnId = await cannedHarness.newTurn();
  expect(await cannedHarness.run(createReflect(cannedHarness.deps), input(turnId, 'Is 70 ok?'))).toEqual({
    dataScience: null,
    domainExpert: null,
  });
});
