export { TurnWorkflow } from './turn-workflow';
export { RetentionWorkflow } from './retention';
export { WebhookDeliveryWorkflow } from './webhook-delivery';
export { TerraIngestWorkflow } from './terra-ingest';
