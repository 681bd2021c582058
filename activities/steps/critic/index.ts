/**
 * The Critic (docs/design.md#the-critic): an adversarial LLM review of one
 * finding after its gates, given the gate results, the matching literature priors and the turn's memory
 * summary (at the top of its system prompt, like every agent's: the snapshot read at the start of the
 * turn, never read again here). Its verdict goes out once per finding as `validator.critic`
 * (docs/api.md#validatorcritic).
 *
 * Two guarantees do not rest on the model: the hard rules are enforced again on whatever it answers,
 * and a malformed answer or an unavailable model yields `downgrade`, never a silent `accept`.
 */
import { log } from '@temporalio/activity';
import type { AnalysisStatistic, Finding, GatesOutcome } from '../../../contracts/findings';
import { statisticOf } from '../../../contracts/statistics';
import { completeStep } from '../../runtime/complete-step';
import { priorsFor } from '../../data/literature-priors';
import { CRITIC_SYSTEM, criticUserPrompt, type CriticPromptInputs } from './prompt';
import { criticAnswerSchema, type CriticAnswer, type CriticVerdict } from './verdict';
import { parseModelJson } from '../../../platform/llm';
import { ModelOutputInvalidError } from '../../../platform/llm/errors';
import type { StepDeps } from '../../runtime/step-deps';

export interface CritiqueFindingInput {
  turnId: string;
  finding: Finding;
  /** What the finding computed; absent (a critic scheduled by an older workflow), its kind's default. */
  statistic?: AnalysisStatistic;
  gates: GatesOutcome;
  /** The turn's memory summary, read once at its start ('' when none or `include_memory` is false). */
  memory?: string;
}

/**
 * The Critic's hard rules, enforced on the parsed answer because a prompt is only a request: a high
 * concern, or two medium ones, rule out `accept`. Only an `accept` is ever changed, and only to
 * `downgrade`; a model that said `reject` keeps its stricter decision.
 */
function enforceHardRules(answer: CriticAnswer): CriticAnswer {
  if (answer.decision !== 'accept') return answer;
  const high = answer.concerns.filter((c) => c.severity === 'high').length;
  const medium = answer.concerns.filter((c) => c.severity === 'medium').length;
  if (high === 0 && medium < 2) return answer;
  const breach = high > 0 ? `${high} high-severity concern(s)` : `${medium} medium-severity concerns`;
  return {
    ...answer,
    decision: 'downgrade',
    rationale: `${answer.rationale} (Downgraded from accept by the Critic's hard rules: ${breach}.)`,
  };
}

function conservativeDefault(findingId: string, cause: 'invalid_answer' | 'unreachable'): CriticVerdict {
  const why =
    cause === 'invalid_answer' ? "the Critic's answer was not a valid review" : 'the Critic model could not be reached';
  return {
    finding_id: findingId,
    decision: 'downgrade',
    concerns: [],
    rationale: `This finding was not reviewed because ${why}. It is downgraded rather than accepted, since an unreviewed finding must not be presented as validated.`,
    fallback: true,
  };
}

async function reviewFinding(deps: StepDeps, input: CritiqueFindingInput): Promise<CriticVerdict> {
  const { finding } = input;
  const inputs: CriticPromptInputs = {
    finding,
    statistic: statisticOf({ finding, statistic: input.statistic }),
    gates: input.gates,
    priors: priorsFor(finding),
  };
  let answer: CriticAnswer;
  try {
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'critic',
      inputs,
      model: deps.models.validator,
      system: CRITIC_SYSTEM,
      memory: input.memory,
      prompt: criticUserPrompt(inputs),
      maxTokens: 1200,
    });
    answer = parseModelJson(response.text, criticAnswerSchema, response.requestId);
  } catch (err) {
    // On malformed output the Critic defaults to downgrade, and the turn goes on. An
    // unreachable model (529, 5xx, a timeout) is transient: it propagates so Temporal retries the
    // activity, and only when the retry budget is spent does the workflow fall back to the same
    // downgrade (recordCriticFallback). Cancellation and refused requests propagate too.
    if (!(err instanceof ModelOutputInvalidError)) throw err;
    log.warn('critic fell back to downgrade', { findingId: finding.id, error: err.message });
    return conservativeDefault(finding.id, 'invalid_answer');
  }
  return { finding_id: finding.id, ...enforceHardRules(answer), fallback: false };
}

/** One `validator.critic` event per finding: keyed by it, so a retried or repeated run never announces twice. */
async function announceVerdict(deps: StepDeps, turnId: string, verdict: CriticVerdict): Promise<void> {
  await deps.events.append(turnId, [
    {
      type: 'validator.critic',
      data: {
        finding_id: verdict.finding_id,
        verdict: verdict.decision,
        reasoning: verdict.rationale,
        concerns: verdict.concerns,
      },
      dedupeKey: `validator.critic:${verdict.finding_id}`,
    },
  ]);
}

export interface RecordCriticFallbackInput {
  turnId: string;
  findingId: string;
}

/**
 * The Critic's verdict when its model could not be reached within the retry budget: the conservative
 * downgrade (an unreviewed finding is never presented as validated), announced like any verdict.
 */
export function createRecordCriticFallback(deps: StepDeps) {
  return async function recordCriticFallback(input: RecordCriticFallbackInput): Promise<CriticVerdict> {
    const verdict = conservativeDefault(input.findingId, 'unreachable');
    await announceVerdict(deps, input.turnId, verdict);
    return verdict;
  };
}

export function createCritiqueFinding(deps: StepDeps) {
  return async function critiqueFinding(input: CritiqueFindingInput): Promise<CriticVerdict> {
    const verdict = await reviewFinding(deps, input);
    await announceVerdict(deps, input.turnId, verdict);
    return verdict;
  };
}
