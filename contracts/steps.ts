/**
 * One list of the steps of a turn and of the agents that run them, so a step has one id everywhere:
 * the workflow's `progress` (the API's `current_step` / `completed_steps`), the Temporal Web UI's
 * activity summaries, the `step` of `agent.thought` and `step.retry` events, the `llm_calls` ledger,
 * and the scripted model's rules (the `x-amy-step` header). Labels are for screens only.
 *
 * Kept free of zod (like ./event-catalog.ts) so that workflow code can import it.
 *
 * - A step that runs more than once in a turn (`ds_run` and `ds_debug` in the debug loop, every
 *   Data Science stage and `domain_expert` as supporting, main and reflection agent, `critic` once per
 *   finding) keeps its one id on every run: `progress` lists it once per run. Which run it was is on
 *   the agent's events (`agent.started` per invocation), not in the id.
 * - A model call's id is its step's id; a step that makes several kinds of model call names each one
 *   `<step>.<call>` (the Health Coach's `health_coach.gate`, `.main`, `.finish`, `.summary`). These ids
 *   are closed: the LLM client's `step` and the scripted model's rules are typed by them.
 * - `number` is the step's number in the pipeline, 0 to 8 (docs/design.md#the-pipeline); `invocation`
 *   for an agent's step, whose number is its role in the turn (3 supporting, 4 main, 5 a reflection
 *   follow-up); null for the service's own bookkeeping.
 */

export const AGENTS = ['data_science', 'domain_expert', 'health_coach', 'investigator'] as const;
export type AgentName = (typeof AGENTS)[number];

/** The agents' names in prose: what the routing, rephrase, reflection and synthesis prompts call them. */
export const AGENT_LABELS: Record<AgentName, string> = {
  data_science: 'Data Science Agent',
  domain_expert: 'Domain Expert Agent',
  health_coach: 'Health Coach Agent',
  investigator: 'Hypothesis Investigator',
};

/** The agents routing can assign (docs/design.md#step-1b-routing); the Investigator is reached through vagueness only. */
export const ROUTABLE_AGENTS = [
  'data_science',
  'domain_expert',
  'health_coach',
] as const satisfies readonly AgentName[];
export type RoutableAgent = (typeof ROUTABLE_AGENTS)[number];

/**
 * Which way a turn went (docs/design.md#the-pipeline): the Investigator (a vague question), the
 * conversational fallback (routing named no agent), or the main agent routing chose. The metrics count
 * turns by it (`amy_turns_ended_total`).
 */
export type TurnPath = 'investigator' | 'conversation' | RoutableAgent;

/** An agent's role in a turn: it names the agent's started/completed events, once per role. */
export const INVOCATIONS = ['supporting', 'main', 'reflection'] as const;
export type Invocation = (typeof INVOCATIONS)[number];

/** The pipeline's step numbers (docs/design.md#the-pipeline). */
export const STEP_NUMBERS = ['0', '1a', '1b', '2', '3', '4', '5', '6', '7', '7b', '8'] as const;
export type StepNumber = (typeof STEP_NUMBERS)[number];

/** Supporting agents are step 3, the main agent step 4, reflection (and its follow-ups) step 5. */
const INVOCATION_STEP_NUMBER: Record<Invocation, StepNumber> = { supporting: '3', main: '4', reflection: '5' };

interface StepDefinition {
  /** What a screen shows for it, e.g. the Temporal Web UI's activity summary after the step number. */
  label: string;
  number: StepNumber | 'invocation' | null;
  agent: AgentName | null;
  /** `true`: one kind of model call, whose id is the step's; a list: the kinds of call, each `<step>.<call>`. */
  modelCalls?: true | readonly string[];
}

export const STEPS = {
  start_turn: { label: 'Start the turn', number: null, agent: null },
  classify_vagueness: { label: 'Classify vagueness', number: '0', agent: null, modelCalls: true },
  // Only in a turn whose request accepts clarification questions (docs/api.md#asking-back), beside step 0.
  clarify: { label: 'Ask what an ambiguous question means', number: '0', agent: null, modelCalls: true },
  investigator_hypotheses: {
    label: 'Investigator · propose hypotheses',
    number: '1a',
    agent: 'investigator',
    modelCalls: true,
  },
  investigator_test: { label: 'Investigator · test hypotheses', number: '1a', agent: 'investigator' },
  investigator_briefing: {
    label: 'Investigator · write the briefing',
    number: '1a',
    agent: 'investigator',
    modelCalls: true,
  },
  route: { label: 'Route to agents', number: '1b', agent: null, modelCalls: true },
  // Routing's corner case: main_agent "" → a conversational reply instead of an agent
  // (docs/design.md#the-conversational-fallback).
  fallback_reply: { label: 'Fallback reply (streamed)', number: '1b', agent: null, modelCalls: true },
  rephrase: { label: 'Rephrase the question per agent', number: '2', agent: null, modelCalls: true },
  // The memory summary is read once at the start of a turn (docs/design.md#injection); the numbered
  // pipeline has no step for it.
  recall_memory: { label: 'Recall memory', number: null, agent: null },
  ds_plan: { label: 'Data Science · plan', number: 'invocation', agent: 'data_science', modelCalls: true },
  ds_code: { label: 'Data Science · write code', number: 'invocation', agent: 'data_science', modelCalls: true },
  ds_run: { label: 'Data Science · run the code in the sandbox', number: 'invocation', agent: 'data_science' },
  ds_debug: { label: 'Data Science · debug the code', number: 'invocation', agent: 'data_science', modelCalls: true },
  ds_summary: {
    label: 'Data Science · summarise the result',
    number: 'invocation',
    agent: 'data_science',
    modelCalls: true,
  },
  ds_extract: {
    label: 'Data Science · extract findings',
    number: 'invocation',
    agent: 'data_science',
    modelCalls: true,
  },
  ds_finish: { label: 'Data Science · done', number: 'invocation', agent: 'data_science' },
  domain_expert: { label: 'Domain Expert', number: 'invocation', agent: 'domain_expert', modelCalls: true },
  // With the coach as main agent, the supporting findings are validated before it speaks
  // (docs/design.md#step-4-the-main-agent).
  pre_validation: { label: 'Validation before the coach (pre-validation hop)', number: '4', agent: null },
  health_coach: {
    label: 'Health Coach',
    number: '4',
    agent: 'health_coach',
    modelCalls: ['gate', 'main', 'finish', 'summary'],
  },
  reflection: { label: 'Reflection', number: '5', agent: null, modelCalls: true },
  validation: { label: 'Validation', number: '6', agent: null },
  gates: { label: 'Validation · reproduction and 7 gates', number: '6', agent: null },
  critic: { label: 'Validation · critic', number: '6', agent: null, modelCalls: true },
  // Once the Critic's retries are spent: its conservative downgrade, announced as its verdict.
  critic_fallback: { label: 'Validation · critic unreachable, downgrade', number: '6', agent: null },
  assessment: { label: 'Validation · assessment', number: '6', agent: null, modelCalls: true },
  synthesis: { label: 'Synthesis (streamed, fact sheet)', number: '7', agent: null, modelCalls: true },
  fact_check: { label: 'Fact-check the answer', number: '7b', agent: null },
  memory: { label: 'Memory · extract and store', number: '8', agent: null, modelCalls: true },
  // A turn that may ask (its request's `interaction`): the question, the wait for the answer, what it went on with.
  ask_user: { label: 'Ask the user', number: null, agent: null },
  take_answer: { label: 'Take the user’s answer, or the default at the deadline', number: null, agent: null },
  complete_turn: { label: 'Complete the turn', number: null, agent: null },
  fail_turn: { label: 'Fail the turn', number: null, agent: null },
  retention: { label: 'Retention · purge expired turn events and idempotency keys', number: null, agent: null },
  reconcile: { label: 'Retention · fail turns whose workflow closed without an outcome', number: null, agent: null },
} as const satisfies Record<string, StepDefinition>;

export type StepId = keyof typeof STEPS;
export const STEP_IDS = Object.keys(STEPS) as StepId[];

/** The steps that make one kind of model call: the call's id is the step's. */
export type SingleCallStep = { [S in StepId]: (typeof STEPS)[S] extends { modelCalls: true } ? S : never }[StepId];

/** Every kind of model call a turn makes: the ledger's `llm_calls.step` and the scripted model's rule key. */
export type ModelCallId = {
  [S in StepId]: (typeof STEPS)[S] extends { modelCalls: infer C }
    ? C extends readonly (infer Call extends string)[]
      ? `${S}.${Call}`
      : S
    : never;
}[StepId];

export const MODEL_CALL_IDS: readonly ModelCallId[] = STEP_IDS.flatMap((id): string[] => {
  const calls = (STEPS[id] as StepDefinition).modelCalls;
  if (calls === undefined) return [];
  return calls === true ? [id] : calls.map((call) => `${id}.${call}`);
}) as ModelCallId[];

export function isStepId(value: string): value is StepId {
  return Object.hasOwn(STEPS, value);
}

export function isModelCallId(value: string): value is ModelCallId {
  return (MODEL_CALL_IDS as readonly string[]).includes(value);
}

/** The step a model call belongs to: `health_coach.main` → `health_coach`. */
export function stepOfModelCall(call: ModelCallId): StepId {
  return call.split('.')[0] as StepId;
}

/** Which agent a step belongs to; null for the turn's own steps. */
export function agentOfStep(step: StepId): AgentName | null {
  return STEPS[step].agent;
}

/** The step's number in this run: an agent's step takes its invocation's. Null for bookkeeping. */
export function stepNumberOf(step: StepId, invocation?: Invocation): StepNumber | null {
  const number: StepDefinition['number'] = STEPS[step].number;
  if (number !== 'invocation') return number;
  return invocation ? INVOCATION_STEP_NUMBER[invocation] : null;
}

/** `1b · Route to agents`, `3 · Data Science · plan`, or the bare label when the step has no number. */
export function numberedLabel(step: StepId, invocation?: Invocation): string {
  const number = stepNumberOf(step, invocation);
  return number === null ? STEPS[step].label : `${number} · ${STEPS[step].label}`;
}

/**
 * How a model call reaches the scripted model (dev/scripted-model/): the `x-amy-step` header names the call,
 * and, only when the LLM client talks to the scripted model, the request body's `amy_step_inputs`
 * field carries the typed inputs its prompt was rendered from, so the scripted model's rules read
 * structured inputs instead of prompt wording. A body field, not a header: a call's inputs include the
 * conversation (up to 100 messages of 20,000 characters) or a Data Science result (up to 64 KB), far
 * past what HTTP headers carry. The real API rejects unknown body fields, so it is never sent there.
 */
export const STEP_HEADER = 'x-amy-step';
export const STEP_INPUTS_FIELD = 'amy_step_inputs';

/**
 * The agent a name stands for: its id, or its label (AGENT_LABELS), which workflow histories recorded
 * before agents had ids carry in routing and rephrase results. Null for anything else.
 */
export function agentFromIdOrLabel(name: string): AgentName | null {
  if ((AGENTS as readonly string[]).includes(name)) return name as AgentName;
  return AGENTS.find((agent) => AGENT_LABELS[agent] === name) ?? null;
}
