/**
 * One turn = one workflow (workflowId = turn id). This code only sequences activities and branches
 * on their results; every side effect lives in activities/. It must stay deterministic: no I/O,
 * clocks, randomness or Node built-ins here (enforced by lint).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  isCancellation,
  log,
} from '@temporalio/workflow';
import type { ErrorBody, TurnErrorCode } from '../contracts/errors';
import { lastUserMessage, type TurnResult } from '../contracts/turn';
import { docsUrl } from '../contracts/docs-url';
import type { ValidatedFinding } from '../activities/validation';
import { bookkeeping, modelSteps } from './activities';
import { runDataScienceAgent } from './data-science';
import type { TurnWorkflowInput } from './definitions';
import { trackProgress, type StepRunner } from './progress';
import { validateFindings, validatorCounts } from './validation';

class AgentNotAvailable extends Error {
  override name = 'AgentNotAvailableError';
}

const FAILURE_CODES: Record<string, TurnErrorCode> = {
  UpstreamUnavailableError: 'upstream_unavailable',
  ModelOutputInvalidError: 'model_output_invalid',
  AgentNotAvailableError: 'agent_not_available',
};

function turnError(err: unknown): ErrorBody {
  let code: TurnErrorCode = 'internal_error';
  let message = 'The turn failed unexpectedly.';
  if (isCancellation(err)) {
    code = 'cancelled';
    message = 'The turn was cancelled.';
  } else if (err instanceof AgentNotAvailable) {
    code = 'agent_not_available';
    message = err.message;
  } else if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure) {
      code = FAILURE_CODES[cause.type ?? ''] ?? 'internal_error';
      message = `Step ${err.activityType} failed: ${cause.message}`;
    } else if (cause instanceof TimeoutFailure) {
      code = 'upstream_unavailable';
      message = `Step ${err.activityType} timed out after its retry budget.`;
    }
  }
  // request_id is filled in by failTurn from the ledger's last failed upstream call, when there is one.
  return { code, message, request_id: '', docs_url: docsUrl(code) };
}

/** Returns the turn's result, so the Web UI shows the answer, its cost and the agents that ran. */
export async function TurnWorkflow(input: TurnWorkflowInput): Promise<TurnResult> {
  const { turnId, messages } = input;
  const step = trackProgress();
  try {
    await step('start_turn', () => bookkeeping.startTurn({ turnId }));
    const { vagueness } = await step('classify_vagueness', () => modelSteps.classifyVagueness({ turnId, messages }));
    if (vagueness === 'high') {
      throw new AgentNotAvailable(
        'Vague questions need the Hypothesis Investigator, which this service does not run yet.',
      );
    }
    const routing = await step('route', () => modelSteps.route({ turnId, messages }));
    if (routing.main_agent === '') {
      const { answer } = await step('fallback_reply', () => modelSteps.replyConversationally({ turnId, messages }));
      return await step('complete_turn', () =>
        bookkeeping.completeTurn({
          turnId,
          answer,
          factSheet: [],
          agentsUsed: [],
          validator: validatorCounts([]),
        }),
      );
    }
    if (routing.main_agent === 'Data Science Agent' && routing.supporting_agents.length === 0) {
      return await dataQuestion(step, input, routing);
    }
    const team = [routing.main_agent, ...routing.supporting_agents].join(' + ');
    throw new AgentNotAvailable(`This question needs ${team}; only the Data Science agent on its own runs yet.`);
  } catch (err) {
    const error = turnError(err);
    // Recording the failure must survive the cancellation that may have caused it.
    await CancellationScope.nonCancellable(() => bookkeeping.failTurn({ turnId, error }));
    throw ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true });
  }
}

type Routing = Awaited<ReturnType<typeof modelSteps.route>>;

/**
 * Collaboration pattern 2 (seed 002): a question about the user's own data, Data Science as the main
 * agent. route → rephrase → Data Science → validation → synthesis (+ fact-check) → memory.
 */
async function dataQuestion(step: StepRunner, input: TurnWorkflowInput, routing: Routing): Promise<TurnResult> {
  const { turnId, userId, messages } = input;
  const userMessage = lastUserMessage(messages);
  const questions = await step('rephrase', () => modelSteps.rephraseQuestions({ turnId, messages, routing }));
  const dataScience = await runDataScienceAgent(step, {
    turnId,
    userId,
    question: questions['Data Science Agent'] ?? userMessage,
    invocation: 'main',
    maxDebugIterations: 2,
    idPrefix: 'ds',
  });
  const validated = await step('validation', () => validateFindings({ turnId, userId }, dataScience.findings));
  const synthesis = await step('synthesis', () =>
    modelSteps.synthesise({
      turnId,
      userMessage,
      mainAgentDraft: dataScience.status === 'ok' ? dataScience.summary : '',
      supportingInsights: '',
      expertProse: '',
      findings: validated.map(({ finding, verdict, source, assessment }) => ({ finding, verdict, source, assessment })),
      dataScienceFailed: dataScience.status === 'failed',
    }),
  );
  await step('memory', () => rememberTurn(turnId, userId, validated));
  return await step('complete_turn', () =>
    bookkeeping.completeTurn({
      turnId,
      answer: synthesis.answer,
      factSheet: synthesis.factSheet,
      agentsUsed: ['data_science'],
      validator: validatorCounts(validated),
    }),
  );
}

/** Memory is best-effort (seed 002, step 8): a turn that answered is not failed by its memory step. */
async function rememberTurn(turnId: string, userId: string, validated: ValidatedFinding[]): Promise<void> {
  try {
    await modelSteps.rememberTurn({ turnId, userId, validated });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('the memory step failed; the turn completes without it', { turnId, error: String(err) });
  }
}
