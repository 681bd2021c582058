/**
 * Abandoned turns: a turn row still queued or running whose workflow has closed without ending it
 * would hold its user's in-flight slot and keep its streams open for good. That happens when an
 * operator terminates the workflow, when a run passes its bound (AMY_TURN_RUN_TIMEOUT_SECONDS), when
 * the workflow fails in a way it could not record, or when Temporal never had it or no longer keeps it.
 * The retention schedule runs this every 15 minutes: each such turn fails with `turn_abandoned`
 * through the same terminal transition as the workflow's own (platform/turn-ending.ts), so the row and
 * the log's last event agree and open streams end with `turn.failed`.
 *
 * It cannot starve: a run takes the open turns it looked at least recently (never first), stamping them
 * as it takes them, so turns it cannot resolve yet (a workflow still open, one Temporal will not
 * describe) go to the back of the line and every open turn is looked at within a few runs, however
 * many old ones stay unresolved. One turn's failure to resolve is logged and passed over.
 */
import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError, type WorkflowExecutionStatusName } from '@temporalio/client';
import { endTurn, turnAbandoned } from '../../platform/turn-ending';
import type { StepDeps } from '../runtime/step-deps';

export interface ReconcileAbandonedTurnsInput {
  /**
   * Only turns created longer ago than this are looked at: the API inserts a turn before it starts
   * its workflow, so a young queued turn without one is not abandoned, only being started.
   */
  abandonedAfterSeconds: number;
}

/** Turns looked at per run; a larger backlog is taken up by the next runs. */
const RECONCILE_BATCH_SIZE = 500;

const CLOSED: ReadonlySet<WorkflowExecutionStatusName> = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TERMINATED',
  'TIMED_OUT',
]);

type Closure = WorkflowExecutionStatusName | 'NOT_FOUND';

/** What the user reads: why the turn has no outcome, and nothing of the machinery. */
const ABANDONED_MESSAGES: Partial<Record<Closure, string>> = {
  TERMINATED: 'The turn was stopped before it finished.',
  TIMED_OUT: 'The turn ran past its time limit.',
  NOT_FOUND: 'The turn never started or was lost before it finished.',
};

const abandonedError = (closure: Closure) =>
  turnAbandoned(ABANDONED_MESSAGES[closure] ?? 'The turn ended without recording its outcome.');

export function createReconcileAbandonedTurns(
  { pool, temporal, clock }: Pick<StepDeps, 'pool' | 'temporal' | 'clock'>,
  batchSize = RECONCILE_BATCH_SIZE,
) {
  /** How the turn's workflow (its latest run: a reset's new run counts) closed; null while it is open. */
  async function closureOf(turnId: string): Promise<Closure | null> {
    try {
      const { status } = await temporal.workflow.getHandle(turnId).describe();
      return CLOSED.has(status.name) ? status.name : null;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
      throw err;
    }
  }

  /** Fails every abandoned turn; returns their ids. */
  return async function reconcileAbandonedTurns({
    abandonedAfterSeconds,
  }: ReconcileAbandonedTurnsInput): Promise<string[]> {
    // Taken and stamped in one statement: a run that dies half-way does not leave the next one the same batch.
    const candidates = await pool.query<{ id: string }>(
      `UPDATE turns SET reconcile_checked_at = now() WHERE id IN (
         SELECT id FROM turns WHERE status IN ('queued', 'running') AND created_at < now() - make_interval(secs => $1)
         ORDER BY reconcile_checked_at NULLS FIRST, created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [abandonedAfterSeconds, batchSize],
    );
    const abandoned: string[] = [];
    for (const { id } of candidates.rows) {
      Context.current().heartbeat(abandoned.length);
      try {
        const closure = await closureOf(id);
        if (closure === null) continue;
        // The workflow records its own ending before it closes, so a turn still in flight here was
        // abandoned; the transition writes nothing if the row ended in the meantime all the same.
        const end = await endTurn(pool, id, { status: 'failed', error: abandonedError(closure) }, clock());
        if (end.ended) {
          abandoned.push(id);
          log.warn('abandoned turn failed', { turnId: id, workflow: closure });
        }
      } catch (err) {
        // Temporal or Postgres down makes every turn of the run land here: the next run tries again.
        log.warn('could not reconcile a turn; it is looked at again after the others', {
          turnId: id,
          error: String(err),
        });
      }
    }
    return abandoned;
  };
}
