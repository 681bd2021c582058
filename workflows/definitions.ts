/** Typed workflow interface shared by the workflow and its clients (API, scripts). */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { InputAnswer, InputReceived, Interaction } from '../contracts/interaction';
import type { AgentName, StepId } from '../contracts/steps';
import type { Message, TurnContext } from '../contracts/turn';

export { TURN_WORKFLOW_TYPE } from '../contracts/workflow-types';

export interface TurnWorkflowInput {
  turnId: string;
  userId: string;
  messages: Message[];
  context: TurnContext;
  /** What the client can answer, when its request said so: only then may the turn ask (./ask-user.ts). */
  interaction?: Interaction;
}

/**
 * What the workflow itself knows about a running turn, the answer to its `progress` query. The API's
 * `TurnProgress` (contracts/turn.ts) is this plus the cost so far, which lives in the llm_calls ledger
 * that workflow code cannot read, so the API adds it when it answers.
 */
export interface WorkflowProgress {
  /** The step most recently started that is still running (parallel agents overlap), or null between steps. */
  current_step: StepId | null;
  /** In the order they ended, one entry per run of a step. */
  completed_steps: StepId[];
  /** Agents whose first step has started, in the order they started. */
  agents_started: AgentName[];
}

export const progressQuery = defineQuery<WorkflowProgress>('progress');

/**
 * The answer to the turn's pending question (POST /v1/turns/:id/input). Its validator refuses, with nothing changed,
 * an answer to another request, one already answered or expired, or an option the request does not offer.
 */
export const provideInputUpdate = defineUpdate<InputReceived, [InputAnswer]>('provideInput');
