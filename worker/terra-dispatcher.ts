/**
 * The Terra half of the worker's dispatcher (./webhook-dispatcher.ts runs both each round): every stored Terra
 * event without an ingestion workflow gets one, started under `terra:<event id>`, then is marked started. A worker
 * dying in between loses nothing (the next round starts it; Temporal refuses a second run of an id still running),
 * and an unmatched event whose user has since appeared is handed back to be ingested again. Events past their
 * retention (platform/terra/inbox.ts) are deleted here too.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Pool } from 'pg';
import {
  markTerraEventStarted,
  purgeExpiredTerraEvents,
  requeueMatchedTerraEvents,
  unstartedTerraEvents,
} from '../platform/terra/inbox';
import { terraIngestWorkflowId } from '../platform/temporal/service-workflows';
import { TERRA_INGEST_WORKFLOW_TYPE, type TerraIngestInput } from '../workflows/terra-ingest';

const BATCH = 100;
/** Unmatched events are looked at again, and events past their retention deleted, every five seconds, not every round. */
const REQUEUE_EVERY_MS = 5_000;
let lastRequeue = 0;

/** One round; returns the workflows started. */
export async function dispatchTerraEvents(deps: {
  pool: Pool;
  temporal: Client;
  taskQueue: string;
  versioned?: boolean;
}): Promise<number> {
  const { pool, temporal } = deps;
  if (Date.now() - lastRequeue >= REQUEUE_EVERY_MS) {
    lastRequeue = Date.now();
    await requeueMatchedTerraEvents(pool);
    await purgeExpiredTerraEvents(pool);
  }
  let started = 0;
  for (;;) {
    const ids = await unstartedTerraEvents(pool, BATCH);
    if (ids.length === 0) return started;
    for (const eventId of ids) {
      try {
        await temporal.workflow.start(TERRA_INGEST_WORKFLOW_TYPE, {
          workflowId: terraIngestWorkflowId(eventId),
          taskQueue: deps.taskQueue,
          args: [{ eventId } satisfies TerraIngestInput],
          // A closed run may run again (an unmatched event whose user appeared); a running one is not doubled.
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          staticSummary: `Terra event ${eventId}`,
          ...(deps.versioned ? { versioningOverride: 'AUTO_UPGRADE' as const } : {}),
        });
        started += 1;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      await markTerraEventStarted(pool, eventId);
    }
  }
}
