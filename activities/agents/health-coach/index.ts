/**
 * The Health Coach (docs/design.md#health-coach), always the main agent: one
 * activity, the step `health_coach`, running the three modules of the modular coaching flow (paper
 * §6.2), each its own kind of model call (contracts/steps.ts):
 *
 * 1. `health_coach.gate` (fast model): may the coach recommend yet? A malformed answer is NOREC — keep
 *    gathering context rather than recommend on a misread.
 * 2. `health_coach.main` (main model): the coaching response, its system prompt set by that verdict,
 *    streamed as the coach's thoughts. It must cite a personal anchor (computeAnchors); a reply that
 *    cites none gets one more call told to anchor, and if that fails too a sentence citing the first
 *    anchor is appended, so the hard rule holds whatever the model does.
 * 3. `health_coach.finish` (fast model): FINISH or CONTINUE (malformed is CONTINUE: ending a
 *    conversation on a misread is worse than one more turn). On FINISH, `health_coach.summary` closes it.
 *
 * The other hard rule: the coach never sees a rejected finding. The workflow filters them, and so
 * does this activity, whatever it is passed.
 */
import { log } from '@temporalio/activity';
import { withMemory } from '../../runtime/memory-injection';
import {
  HC_FINISH_GATE,
  HC_RECOMMEND_GATE,
  HC_SUMMARY,
  HC_SYSTEM,
  hcClosingPrompt,
  hcGatePrompt,
  hcMainPrompt,
  type CoachClosingPromptInputs,
  type CoachGatePromptInputs,
  type CoachMainPromptInputs,
} from './prompt';
import type { ModelCallInputs } from '../../runtime/model-call-inputs';
import { readTurnHealthData } from '../../../platform/health-data/snapshot';
import type { ModelCallId } from '../../../contracts/steps';
import type { LlmRequest, LlmResponse } from '../../../platform/llm';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt, type StepAttempt } from '../../runtime/step-attempt';
import { announceAgentCompleted, announceAgentStarted, streamThoughts } from '../../runtime/stream-agent-reply';
import { citedAnchorKeys, computeAnchors, type PersonalAnchor } from './anchors';
import { parseFinishDecision, parseRecommendVerdict } from './decisions';
import { isShownFinding, type CoachUserInput, type CoachUserOutput } from './types';

export { computeAnchors, citedAnchorKeys, type PersonalAnchor } from './anchors';
export { parseFinishDecision, parseRecommendVerdict } from './decisions';
export type { CoachFinding, CoachUserInput, CoachUserOutput } from './types';

const AGENT = 'health_coach';
/** The coach is always the main agent, so it has one invocation per turn. */
const INVOCATION = 'main';
const STEP = 'health_coach';
type CoachCall = Extract<ModelCallId, `${typeof STEP}.${string}`>;

/** The citation appended when the model would not anchor its advice: the anchor's value as stored. */
export function anchorSentence(anchor: PersonalAnchor): string {
  return `For reference, from your own data: ${anchor.label} was ${anchor.value}${anchor.unit ? ` ${anchor.unit}` : ''} (${anchor.window}).`;
}

async function coach(deps: StepDeps, input: CoachUserInput, { attempt, signal, narration }: StepAttempt) {
  const { turnId } = input;
  let costUsd = 0;
  const complete = async <Call extends CoachCall>(call: Call, inputs: ModelCallInputs[Call], request: LlmRequest) => {
    const response = await deps.llm.complete({ turnId, step: call, inputs, attempt, signal }, request);
    costUsd += response.costUsd;
    return response;
  };
  const stream = async <Call extends CoachCall>(
    call: Call,
    inputs: ModelCallInputs[Call],
    request: LlmRequest,
  ): Promise<LlmResponse> => {
    const response = await streamThoughts(deps, {
      turnId,
      modelCall: call,
      inputs,
      narration,
      signal,
      agent: AGENT,
      request,
    });
    costUsd += response.costUsd;
    return response;
  };
  /** Text the reply gains outside a streamed call, so the thoughts still show all of it. */
  const thought = (text: string) => narration.write(AGENT, text);

  const findings = input.findings.filter(isShownFinding);
  if (findings.length < input.findings.length) {
    log.warn('rejected findings withheld from the coach', { withheld: input.findings.length - findings.length });
  }
  const { daily } = await readTurnHealthData(deps.pool, { turnId, userId: input.userId });
  const anchors = computeAnchors(daily);
  const { messages, question } = input;
  const user = (content: string): LlmRequest['messages'] => [{ role: 'user', content }];

  // Module 1: may the coach recommend yet?
  const gateInputs: CoachGatePromptInputs = { messages, question };
  const gate = await complete('health_coach.gate', gateInputs, {
    model: deps.models.fast,
    system: withMemory(HC_RECOMMEND_GATE, input.memory),
    maxTokens: 20,
    messages: user(hcGatePrompt(gateInputs)),
  });
  let verdict = parseRecommendVerdict(gate.text);
  if (verdict === null) {
    log.warn('recommend gate answer malformed; keeping to NOREC', { answer: gate.text.slice(0, 200) });
    verdict = 'NOREC';
  }

  // Module 2: the coaching response, anchored on the user's own numbers.
  const coachingResponse = async (remindOfAnchors: boolean) => {
    const inputs: CoachMainPromptInputs = {
      messages,
      question,
      verdict,
      anchors,
      findings,
      supportingInsights: input.supportingInsights,
      remindOfAnchors,
    };
    const response = await stream('health_coach.main', inputs, {
      model: deps.models.main,
      system: withMemory(HC_SYSTEM(inputs.verdict), input.memory),
      maxTokens: 700,
      messages: user(hcMainPrompt(inputs)),
    });
    if (!response.text.trim()) {
      throw new ModelOutputInvalidError('the coach replied with nothing', { requestId: response.requestId });
    }
    return response.text.trim();
  };
  let reply = await coachingResponse(false);
  let citedAnchors = citedAnchorKeys(reply, anchors);
  if (citedAnchors.length === 0 && anchors.length > 0) {
    await thought('\n\n');
    reply = await coachingResponse(true);
    citedAnchors = citedAnchorKeys(reply, anchors);
    if (citedAnchors.length === 0) {
      log.warn('coach cited no personal anchor twice; appending one', { anchor: anchors[0].key });
      const sentence = anchorSentence(anchors[0]);
      reply = `${reply}\n\n${sentence}`;
      await thought(`\n\n${sentence}`);
      citedAnchors = [anchors[0].key];
    }
  }

  // Module 3: is the conversation done?
  const closing: CoachClosingPromptInputs = { messages, reply };
  const finishGate = await complete('health_coach.finish', closing, {
    model: deps.models.fast,
    system: withMemory(HC_FINISH_GATE, input.memory),
    maxTokens: 10,
    messages: user(hcClosingPrompt(closing)),
  });
  let finish = parseFinishDecision(finishGate.text);
  if (finish === null) {
    log.warn('finish gate answer malformed; continuing', { answer: finishGate.text.slice(0, 200) });
    finish = 'CONTINUE';
  }
  let closingSummary: string | null = null;
  if (finish === 'FINISH') {
    await thought('\n\n');
    const summary = await stream('health_coach.summary', closing, {
      model: deps.models.fast,
      system: withMemory(HC_SUMMARY, input.memory),
      maxTokens: 150,
      messages: user(hcClosingPrompt(closing)),
    });
    closingSummary = summary.text.trim() || null;
    if (closingSummary) reply = `${reply}\n\n${closingSummary}`;
    else log.warn('closing summary was empty; the reply ends without one');
  }

  return { reply, verdict, finish, closingSummary, anchors, citedAnchors, costUsd } satisfies CoachUserOutput;
}

export function createCoachUser(deps: StepDeps): (input: CoachUserInput) => Promise<CoachUserOutput> {
  return async function coachUser(input) {
    const startedAt = deps.clock();
    await announceAgentStarted(deps.events, {
      turnId: input.turnId,
      agent: AGENT,
      invocation: INVOCATION,
      question: input.question,
      at: startedAt,
    });
    const output = await runStepAttempt(deps.events, input.turnId, STEP, (attempt) => coach(deps, input, attempt));
    await announceAgentCompleted(deps.events, {
      turnId: input.turnId,
      agent: AGENT,
      invocation: INVOCATION,
      startedAt,
      at: deps.clock(),
      costUsd: output.costUsd,
      output: output.reply,
    });
    return output;
  };
}
