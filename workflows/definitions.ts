/** Typed workflow interface shared by the workflow and its clients (API, scripts). */
import { defineQuery } from '@temporalio/workflow';
import type { Message, TurnContext } from '../contracts/turn';

export const TURN_WORKFLOW_TYPE = 'TurnWorkflow';

export interface TurnWorkflowInput {
  turnId: string;
  userId: string;
  messages: Message[];
  context: TurnContext;
}

export interface TurnProgress {
  current_step: string | null;
  completed_steps: string[];
}

export const progressQuery = defineQuery<TurnProgress>('progress');
