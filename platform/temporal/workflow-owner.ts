/**
 * Whose data a workflow's payloads are, for the encryption codec: a turn's workflow id is its turn id, and the
 * turn row names its user. Any other workflow is the service's own (retention) and carries no user content.
 */
import type { Pool } from 'pg';
import { ID_PREFIXES } from '../../contracts/ids';

/** Workflow ids of user turns: the turn id (contracts/ids.ts). */
const isTurnWorkflow = (workflowId: string) => workflowId.startsWith(ID_PREFIXES.turn);
/** Turn ids looked up recently; a turn's user never changes, so the only bound is memory. */
const MAX_CACHED = 10_000;

/** Thrown for a turn workflow whose turn row is gone: its payloads must not be written in the clear. */
class WorkflowOwnerUnknownError extends Error {
  override name = 'WorkflowOwnerUnknownError';
}

export function createWorkflowOwners(pool: Pick<Pool, 'query'>): (workflowId: string) => Promise<string | null> {
  const owners = new Map<string, string>();
  return async function userOfWorkflow(workflowId: string): Promise<string | null> {
    if (!isTurnWorkflow(workflowId)) return null;
    const cached = owners.get(workflowId);
    if (cached) return cached;
    const { rows } = await pool.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [workflowId]);
    const userId = rows[0]?.user_id;
    // A deleted account's turn: refuse rather than store what is left of it unencrypted.
    if (!userId) throw new WorkflowOwnerUnknownError(`turn ${workflowId} has no row: its payloads have no key`);
    if (owners.size >= MAX_CACHED) owners.delete(owners.keys().next().value!);
    owners.set(workflowId, userId);
    return userId;
  };
}
