/**
 * The turn service owns the `turns` table for the API: creation under the per-user concurrency cap,
 * reads scoped to the owner, and the Turn resource shape.
 */
import type { Pool } from 'pg';
import type { ErrorBody } from '../../contracts/errors';
import { TERMINAL_EVENTS, type TurnEventType } from '../../contracts/events';
import type { Message, PreviousAttempt, Turn, TurnContext, TurnResult, TurnStatus } from '../../contracts/turn';
import { newId } from '../../activities/services/ids';
import { ApiError, notFound } from '../errors';

export interface TurnRow {
  id: string;
  user_id: string;
  status: TurnStatus;
  messages: Message[];
  context: TurnContext;
  result: TurnResult | null;
  error: ErrorBody | null;
  created_at: Date;
  completed_at: Date | null;
  attempt: number;
  previous_attempts: PreviousAttempt[];
  last_event_id: number;
  /** A failed turn's ledger sum (numeric, as text), failed attempts included; null for other turns. */
  ledger_cost_usd: string | null;
}

/** A completed turn's cost is its result's; a failed turn's is the ledger's (calls can only be added). */
function costOf(row: TurnRow): number | null {
  if (row.status === 'completed') return row.result?.cost_usd ?? null;
  if (row.status === 'failed') return Number(Number(row.ledger_cost_usd).toFixed(6));
  return null;
}

export function toTurnResource(row: TurnRow): Turn {
  return {
    id: row.id,
    status: row.status,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    messages: row.messages,
    result: row.status === 'completed' ? row.result : null,
    error: row.status === 'failed' ? row.error : null,
    attempt: row.attempt,
    previous_attempts: row.previous_attempts,
    cost_usd: costOf(row),
    last_event_id: row.last_event_id,
  };
}

const TURN_COLUMNS = `id, user_id, status, messages, context, result, error, created_at, completed_at, attempt,
  previous_attempts, last_event_id,
  -- Only a failed turn needs the ledger's sum (a completed one has it in its result): CASE skips the rest.
  CASE WHEN status = 'failed' THEN (SELECT COALESCE(SUM(cost_usd), 0) FROM llm_calls WHERE turn_id = turns.id)::text
  END AS ledger_cost_usd`;

/**
 * Inserts a queued turn unless the user already has `maxInFlight` queued or running turns. The
 * user's row lock serialises concurrent creations, so the cap holds under any number of racing POSTs.
 */
export async function createQueuedTurn(
  pool: Pool,
  args: { userId: string; messages: Message[]; context: TurnContext; maxInFlight: number },
): Promise<TurnRow> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [args.userId]);
    const inFlight = await client.query<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM turns WHERE user_id = $1 AND status IN ('queued', 'running')`,
      [args.userId],
    );
    if (inFlight.rows[0].n >= args.maxInFlight) {
      throw new ApiError(
        'concurrency_limit_exceeded',
        `You already have ${inFlight.rows[0].n} turns in flight; at most ${args.maxInFlight} may be queued or running at once.`,
        undefined,
        { 'Retry-After': '5' },
      );
    }
    const inserted = await client.query<TurnRow>(
      `INSERT INTO turns (id, user_id, status, messages, context) VALUES ($1, $2, 'queued', $3, $4)
       RETURNING ${TURN_COLUMNS}`,
      [newId('turn'), args.userId, JSON.stringify(args.messages), JSON.stringify(args.context)],
    );
    await client.query('COMMIT');
    return inserted.rows[0];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Used when the workflow could not be started: the turn never existed as far as the client knows. */
export async function discardQueuedTurn(pool: Pool, turnId: string): Promise<void> {
  await pool.query(`DELETE FROM turns WHERE id = $1 AND status = 'queued' AND last_event_id = 0`, [turnId]);
}

/** Another user's turn is indistinguishable from a missing one (404), by design. */
export async function getTurnForUserOrThrow(pool: Pool, userId: string, turnId: string): Promise<TurnRow> {
  const rows = await pool.query<TurnRow>(`SELECT ${TURN_COLUMNS} FROM turns WHERE id = $1 AND user_id = $2`, [
    turnId,
    userId,
  ]);
  if (rows.rowCount === 0) throw notFound('Turn');
  return rows.rows[0];
}

/** What the turn has spent so far: every ledger entry written for it (calls that ended, failed attempts included). */
export async function turnCostSoFar(pool: Pool, turnId: string): Promise<number> {
  const rows = await pool.query<{ cost: string }>(
    `SELECT COALESCE(SUM(cost_usd), 0)::text AS cost FROM llm_calls WHERE turn_id = $1`,
    [turnId],
  );
  return Number(rows.rows[0].cost);
}

/**
 * Whether the turn has ended and its log already ends with the terminal event, so nothing follows its
 * `last_event_id` (until an operator retries it). The status alone does not say so: completeTurn and
 * failTurn update the row first and append the terminal event in a later statement.
 */
export async function hasTurnLogEnded(pool: Pool, row: TurnRow): Promise<boolean> {
  if (row.status !== 'completed' && row.status !== 'failed') return false;
  const last = await pool.query<{ type: TurnEventType }>(
    'SELECT type FROM turn_events WHERE turn_id = $1 AND id = $2',
    [row.id, row.last_event_id],
  );
  return last.rowCount === 1 && TERMINAL_EVENTS.includes(last.rows[0].type);
}

export const isTurnInFlight = (row: TurnRow) => row.status === 'queued' || row.status === 'running';
