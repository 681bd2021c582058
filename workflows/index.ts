export { TurnWorkflow } from './turn-workflow';
