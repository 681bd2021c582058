/**
 * Whose data a workflow's payloads are, for the encryption codec: a turn's workflow id is its turn id, and the
 * turn row names its user. The service's own workflows (retention, webhook deliveries), known by their ids'
 * forms (./service-workflows.ts), carry no user content. Every other id is looked up as a turn's: one whose
 * row is missing has no owner, and none of its payloads may be read or written.
 */
import type { Pool } from 'pg';
import { isServiceWorkflowId } from './service-workflows';
/** Turn ids looked up recently; a turn's user never changes, so the only bound is memory. */
const MAX_CACHED = 10_000;

/**
 * Whose a workflow's payloads are: a user's (their turn), the service's own workflows' (plain), or a turn with
 * no row (deleted under a running workflow, or an id no turn ever had), which no one may read or write for.
 */
export type WorkflowOwner = { userId: string } | 'service_workflow' | 'orphaned_turn';

/** Whose each workflow's payloads are, for one process: looked up once per turn, or told by the process that made the turn. */
export interface WorkflowOwners {
  ownerOf(workflowId: string): Promise<WorkflowOwner>;
  /**
   * Records the user of a turn this process has just created, so that the encoding of its workflow's start
   * needs no lookup (the API, which has just written the row). Only ever the row's own user.
   */
  rememberTurnOwner(turnId: string, userId: string): void;
}

export function createWorkflowOwners(pool: Pick<Pool, 'query'>): WorkflowOwners {
  // The lookup itself is cached, not its answer: a turn's first payloads are often encoded at once
  // (a workflow task's commands and an activity's result), and they share one statement.
  const owners = new Map<string, Promise<WorkflowOwner>>();
  const remember = (workflowId: string, owner: Promise<WorkflowOwner>) => {
    if (owners.size >= MAX_CACHED) owners.delete(owners.keys().next().value!);
    owners.set(workflowId, owner);
  };
  async function lookUp(workflowId: string): Promise<WorkflowOwner> {
    const { rows } = await pool.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [workflowId]);
    const userId = rows[0]?.user_id;
    return userId ? { userId } : 'orphaned_turn';
  }
  return {
    async ownerOf(workflowId) {
      if (isServiceWorkflowId(workflowId)) return 'service_workflow';
      const cached = owners.get(workflowId);
      if (cached) return cached;
      const owner = lookUp(workflowId);
      remember(workflowId, owner);
      // Only a known owner is kept: an orphaned turn (or a failed lookup) is asked again next time.
      owner.then(
        (found) => (found === 'orphaned_turn' ? owners.delete(workflowId) : undefined),
        () => owners.delete(workflowId),
      );
      return owner;
    },
    rememberTurnOwner(turnId, userId) {
      remember(turnId, Promise.resolve({ userId }));
    },
  };
}
