/**
 * The service's own workflows, by type, and the ids each one runs under. They carry no user content (a number
 * of seconds, a webhook delivery's ids, a Terra event's id), so their payloads stay plain. Any other workflow id is treated as a
 * turn's, whose payloads are its user's and must be encrypted for them (./encryption-codec.ts).
 *
 * The id forms are the other half of the rule: the payload codec knows a workflow by its id only, so a workflow
 * of one of these types on another id, or a turn's workflow on one of these ids, is refused before it runs a
 * step (worker/turn-run-interceptor.ts). Whoever can start a workflow on Temporal's port cannot get user data in
 * or out in the clear by picking an id or a type.
 */
import { isTurnId } from '../../contracts/ids';
import { TURN_WORKFLOW_TYPE } from '../../contracts/workflow-types';

/** The `amy-retention` schedule's workflow id; Temporal appends the run's time (`amy-retention-run-2026-…`). */
export const RETENTION_WORKFLOW_ID = 'amy-retention-run';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const DELIVERY_WORKFLOW_ID = new RegExp(`^webhook:msg_${ULID}:we_${ULID}(:[1-9]\\d*)?$`);
const TERRA_INGEST_WORKFLOW_ID = new RegExp(`^terra:tev_${ULID}$`);

/** The id a Terra event's ingestion runs under (workflows/terra-ingest.ts). */
export const terraIngestWorkflowId = (eventId: string) => `terra:${eventId}`;

/** Whether a workflow id is of the form its service workflow type runs under. */
const SERVICE_WORKFLOW_IDS = {
  RetentionWorkflow: (workflowId: string) =>
    workflowId === RETENTION_WORKFLOW_ID || workflowId.startsWith(`${RETENTION_WORKFLOW_ID}-`),
  WebhookDeliveryWorkflow: (workflowId: string) => DELIVERY_WORKFLOW_ID.test(workflowId),
  TerraIngestWorkflow: (workflowId: string) => TERRA_INGEST_WORKFLOW_ID.test(workflowId),
} as const;
type ServiceWorkflowType = keyof typeof SERVICE_WORKFLOW_IDS;

/** Whether a workflow id is one of the service's own workflows', whose payloads stay plain. */
export const isServiceWorkflowId = (workflowId: string) =>
  Object.values(SERVICE_WORKFLOW_IDS).some((fits) => fits(workflowId));

/**
 * Whether a workflow of this type may run under this id: a turn's on its turn id, a service workflow's on its
 * own form. A type the service does not know has no business on its task queue.
 */
export function workflowIdFitsType(workflowType: string, workflowId: string): boolean {
  if (workflowType === TURN_WORKFLOW_TYPE) return isTurnId(workflowId);
  return Object.hasOwn(SERVICE_WORKFLOW_IDS, workflowType)
    ? SERVICE_WORKFLOW_IDS[workflowType as ServiceWorkflowType](workflowId)
    : false;
}
