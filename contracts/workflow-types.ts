/**
 * The turn workflow's type name: what the API starts, the worker registers and the payload codec's rules know a
 * turn's workflow by (platform/temporal/service-workflows.ts). Here, on the ground floor, so that platform code
 * can name it without importing the workflows above it.
 */
export const TURN_WORKFLOW_TYPE = 'TurnWorkflow';
