/**
 * The ingestion of one Terra event (docs/terra.md#what-happens-to-an-event), started by the worker's dispatcher
 * under the id `terra:<event id>` once the receiver has stored the event. It carries the event's id only, so its
 * history holds nothing of a user's, and its one activity is retried while Postgres is away: an event stored is an
 * event ingested, whatever restarts in between. Its outcome is on the event's row, not here.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { TerraActivities, TerraIngestSummary } from '../activities/terra/ingest';

export const TERRA_INGEST_WORKFLOW_TYPE = 'TerraIngestWorkflow';

export interface TerraIngestInput {
  eventId: string;
}

/**
 * About half an hour of retries, backing off to a minute: longer than a Postgres restart or a failover takes. A
 * worker that dies mid-event is noticed by the heartbeat (beaten between a chunk's days), not after the whole timeout.
 */
const { ingestTerraEvent } = proxyActivities<TerraActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 35 },
});

export async function TerraIngestWorkflow({ eventId }: TerraIngestInput): Promise<TerraIngestSummary> {
  return ingestTerraEvent({ eventId });
}
