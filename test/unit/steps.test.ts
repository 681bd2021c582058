/**
 * The one list of steps and agents (contracts/steps.ts), as a specification: every activity runs a
 * listed step, every model call is a listed id with a scripted rule, and the labels carry the pipeline's
 * step numbers, 0 to 8 (docs/design.md#the-pipeline).
 */
import { createActivities, type StepDeps } from '../../activities';
import {
  AGENTS,
  AGENT_LABELS,
  MODEL_CALL_IDS,
  ROUTABLE_AGENTS,
  STEP_NUMBERS,
  STEPS,
  STEP_IDS,
  agentOfStep,
  isModelCallId,
  isStepId,
  numberedLabel,
  stepNumberOf,
  stepOfModelCall,
  type StepNumber,
  type StepId,
} from '../../contracts/steps';
import { defaultRules, scriptedRules } from '../../dev/scripted-model/rules';
import { ACTIVITY_STEPS, activitySummary } from '../../workflows/summaries';

/** The pipeline's steps by number and what each is (docs/design.md#the-pipeline). */
const PIPELINE: Record<StepNumber, string> = {
  '0': 'Vagueness classify',
  '1a': 'Investigator (high vagueness only)',
  '1b': 'Routing (low/medium vagueness)',
  '2': 'Question rephrase per agent',
  '3': 'Supporting agents',
  '4': 'Main agent',
  '5': 'Reflection (only if supporting list was non-empty)',
  '6': 'Validation',
  '7': 'Synthesis (streams)',
  '7b': 'Fact-check pass',
  '8': 'Memory extraction',
};

/** Where each step sits in the pipeline; `invocation`: an agent's step, numbered by its role in the turn. */
const EXPECTED_STEP_NUMBER: Record<StepId, StepNumber | 'invocation' | null> = {
  start_turn: null,
  classify_vagueness: '0',
  clarify: '0',
  investigator_hypotheses: '1a',
  investigator_test: '1a',
  investigator_briefing: '1a',
  route: '1b',
  fallback_reply: '1b',
  rephrase: '2',
  recall_memory: null,
  ds_plan: 'invocation',
  ds_code: 'invocation',
  ds_run: 'invocation',
  ds_debug: 'invocation',
  ds_summary: 'invocation',
  ds_extract: 'invocation',
  ds_finish: 'invocation',
  domain_expert: 'invocation',
  pre_validation: '4',
  health_coach: '4',
  reflection: '5',
  validation: '6',
  gates: '6',
  critic: '6',
  critic_fallback: '6',
  assessment: '6',
  synthesis: '7',
  fact_check: '7b',
  memory: '8',
  ask_user: null,
  take_answer: null,
  complete_turn: null,
  fail_turn: null,
  retention: null,
  reconcile: null,
};

describe('steps', () => {
  test('every activity the worker registers runs a listed step, and only the workflow groupings have none', () => {
    const activities = Object.keys(createActivities({} as StepDeps)).sort();
    expect(Object.keys(ACTIVITY_STEPS).sort()).toEqual(activities);
    const runByAnActivity = new Set(Object.values(ACTIVITY_STEPS));
    expect(STEP_IDS.filter((step) => !runByAnActivity.has(step))).toEqual(['pre_validation', 'validation']);
  });

  test('each activity runs its own step: one activity, one step', () => {
    const steps = Object.values(ACTIVITY_STEPS);
    expect(new Set(steps).size).toBe(steps.length);
  });

  test('ids are snake_case and every id is recognised as one', () => {
    for (const step of STEP_IDS) {
      expect(step).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(isStepId(step)).toBe(true);
    }
    expect(isStepId('ds_debug_1')).toBe(false);
    expect(isStepId('memory_extract')).toBe(false);
  });

  test('each step sits where the pipeline puts it', () => {
    expect(Object.fromEntries(STEP_IDS.map((step) => [step, STEPS[step].number]))).toEqual(EXPECTED_STEP_NUMBER);
    // (Object.keys lists integer-like keys first, so compare as sets.)
    expect(Object.keys(PIPELINE).sort()).toEqual([...STEP_NUMBERS].sort());
    // Every numbered step of the pipeline is run by some step of the turn.
    const numbered = new Set(
      STEP_IDS.flatMap((step) => (['supporting', 'main', 'reflection'] as const).map((i) => stepNumberOf(step, i))),
    );
    expect(STEP_NUMBERS.filter((number) => !numbered.has(number))).toEqual([]);
  });

  test("an agent's step takes the number of its role: 3 supporting, 4 main, 5 a reflection follow-up", () => {
    expect(stepNumberOf('ds_plan', 'supporting')).toBe('3');
    expect(stepNumberOf('ds_plan', 'main')).toBe('4');
    expect(stepNumberOf('ds_plan', 'reflection')).toBe('5');
    expect(stepNumberOf('domain_expert', 'main')).toBe('4');
    expect(stepNumberOf('ds_run')).toBeNull();
    expect(stepNumberOf('health_coach', 'supporting')).toBe('4');
  });
});

describe('labels, numbered as the pipeline is', () => {
  test('a numbered step reads "<step number> · <label>"; bookkeeping has no number', () => {
    expect(numberedLabel('classify_vagueness')).toBe('0 · Classify vagueness');
    expect(numberedLabel('route')).toBe('1b · Route to agents');
    expect(numberedLabel('rephrase')).toBe('2 · Rephrase the question per agent');
    expect(numberedLabel('reflection')).toBe('5 · Reflection');
    expect(numberedLabel('synthesis')).toBe('7 · Synthesis (streamed, fact sheet)');
    expect(numberedLabel('fact_check')).toBe('7b · Fact-check the answer');
    expect(numberedLabel('memory')).toBe('8 · Memory · extract and store');
    expect(numberedLabel('start_turn')).toBe('Start the turn');
  });

  test('every Web UI summary starts with its step’s numbered label', () => {
    for (const [activity, step] of Object.entries(ACTIVITY_STEPS)) {
      const input = { invocation: 'supporting', finding: { id: 'ds-001' }, findings: [], hypotheses: [] };
      const summary = activitySummary(activity as keyof typeof ACTIVITY_STEPS, input);
      expect(
        summary.startsWith(numberedLabel(step, STEPS[step].number === 'invocation' ? 'supporting' : undefined)),
      ).toBe(true);
      const number = stepNumberOf(step, 'supporting');
      if (number) expect(summary).toMatch(new RegExp(`^${number} · `));
      else expect(summary).not.toMatch(/^\d/);
    }
  });

  test.each([
    ['classifyVagueness', {}, '0 · Classify vagueness'],
    ['proposeHypotheses', {}, '1a · Investigator · propose hypotheses'],
    ['testHypotheses', { hypotheses: [1, 2, 3] }, '1a · Investigator · test hypotheses (3)'],
    ['route', {}, '1b · Route to agents'],
    ['replyConversationally', {}, '1b · Fallback reply (streamed)'],
    ['rephraseQuestions', {}, '2 · Rephrase the question per agent'],
    ['planAnalysis', { invocation: 'supporting' }, '3 · Data Science · plan (supporting)'],
    ['debugAnalysisCode', { invocation: 'main' }, '4 · Data Science · debug the code (main)'],
    ['consultDomainExpert', { invocation: 'reflection' }, '5 · Domain Expert (reflection)'],
    ['coachUser', {}, '4 · Health Coach'],
    ['reflect', {}, '5 · Reflection'],
    ['runGates', { findings: [1, 2] }, '6 · Validation · reproduction and 7 gates on 2 finding(s)'],
    ['critiqueFinding', { finding: { id: 'ds-001' } }, '6 · Validation · critic on ds-001'],
    ['assessFinding', { finding: { id: 'ds-001' } }, '6 · Validation · assessment of ds-001'],
    ['synthesise', {}, '7 · Synthesis (streamed, fact sheet)'],
    ['checkAnswer', {}, '7b · Fact-check the answer'],
    ['rememberTurn', {}, '8 · Memory · extract and store'],
    ['recallMemory', {}, 'Recall memory'],
    ['failTurn', { error: { code: 'cancelled' } }, 'Fail the turn (cancelled)'],
  ] as const)('%s %j → %s', (activity, input, summary) => {
    expect(activitySummary(activity, input)).toBe(summary);
  });
});

describe('model calls', () => {
  test('a model call is its step’s id, or `<step>.<call>` for a step with several kinds of call', () => {
    for (const call of MODEL_CALL_IDS) {
      const step = stepOfModelCall(call);
      expect(isStepId(step)).toBe(true);
      const calls = (STEPS[step] as { modelCalls?: true | readonly string[] }).modelCalls;
      expect(calls === true ? call === step : calls?.map((c) => `${step}.${c}`).includes(call)).toBe(true);
    }
    expect(MODEL_CALL_IDS.filter((call) => call.startsWith('health_coach'))).toEqual([
      'health_coach.gate',
      'health_coach.main',
      'health_coach.finish',
      'health_coach.summary',
    ]);
    expect(isModelCallId('hc_main')).toBe(false);
    expect(isModelCallId('health_coach')).toBe(false);
  });

  test('the scripted model has exactly one rule for every listed model call, and none for anything else', () => {
    for (const rules of [defaultRules, scriptedRules({ brokenCode: 'always' })]) {
      const answered = rules.map((rule) => rule.step);
      expect(new Set(answered).size).toBe(answered.length);
      expect([...answered].sort()).toEqual([...MODEL_CALL_IDS].sort());
    }
  });
});

describe('agents', () => {
  test('one id per agent; the names in prose are labels, for the prompts', () => {
    expect(AGENTS).toEqual(['data_science', 'domain_expert', 'health_coach', 'investigator']);
    expect(ROUTABLE_AGENTS).toEqual(['data_science', 'domain_expert', 'health_coach']);
    expect(AGENT_LABELS).toEqual({
      data_science: 'Data Science Agent',
      domain_expert: 'Domain Expert Agent',
      health_coach: 'Health Coach Agent',
      investigator: 'Hypothesis Investigator',
    });
  });

  test('a step belongs to the agent the list names, whatever its id looks like', () => {
    const byAgent = (agent: string | null) => STEP_IDS.filter((step) => agentOfStep(step) === agent);
    expect(byAgent('data_science')).toEqual([
      'ds_plan',
      'ds_code',
      'ds_run',
      'ds_debug',
      'ds_summary',
      'ds_extract',
      'ds_finish',
    ]);
    expect(byAgent('domain_expert')).toEqual(['domain_expert']);
    expect(byAgent('health_coach')).toEqual(['health_coach']);
    expect(byAgent('investigator')).toEqual(['investigator_hypotheses', 'investigator_test', 'investigator_briefing']);
  });
});
