/**
 * Ends the workflows of turns that have no row: an account deleted while one of its turns' starts was still on
 * its way to Temporal, or a workflow started by hand on an id no turn ever had. The payload codec will neither
 * read nor write such a workflow's payloads (platform/temporal/encryption-codec.ts), so it could only fail its
 * workflow tasks until its run timed out; and no key that outlives the user may be used to let it go on. The
 * worker terminates it instead, once per workflow per process, with a reason that says why and holds nothing
 * of the user.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../platform/logger';

export const TURN_WITHOUT_OWNER_REASON = 'turn_without_owner: the turn has no row (its account was deleted?)';

export function turnWithoutOwnerTerminator(opts: {
  temporal: () => Client;
  logger: Pick<Logger, 'warn'>;
}): (workflowId: string) => void {
  const terminating = new Set<string>();
  return (workflowId) => {
    if (terminating.has(workflowId)) return;
    terminating.add(workflowId);
    opts
      .temporal()
      .workflow.getHandle(workflowId)
      .terminate(TURN_WITHOUT_OWNER_REASON)
      .then(
        () => opts.logger.warn('terminated the workflow of a turn without owner', { workflow_id: workflowId }),
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return; // closed or deleted already
          opts.logger.warn('could not terminate the workflow of a turn without owner', {
            workflow_id: workflowId,
            error: err instanceof Error ? err.name : String(err),
          });
        },
      )
      .finally(() => terminating.delete(workflowId));
  };
}
