export { TurnWorkflow } from './turn-workflow';
export { RetentionWorkflow } from './retention';
