/**
 * Turn bookkeeping: the Postgres row follows the workflow (queued → running → completed | failed,
 * never backwards) and the terminal event is written exactly once. Each activity is idempotent so a
 * retry after a crash between its two writes finishes the job instead of repeating it.
 */
import type { ErrorBody } from '../../contracts/errors';
import type { AgentName, FactCheckOutcome, FactEntry, TurnResult, ValidatorCounts } from '../../contracts/turn';
import { newId } from '../../platform/ids';
import type { StepDeps } from '../runtime/step-deps';

export interface CompleteTurnInput {
  turnId: string;
  answer: string;
  factSheet: FactEntry[];
  agentsUsed: AgentName[];
  validator: ValidatorCounts;
  /** The fact-check's outcome (step 7b); absent when a history recorded before the check was binding replays. */
  factCheck?: FactCheckOutcome;
}

export interface FailTurnInput {
  turnId: string;
  error: ErrorBody;
}

type Deps = Pick<StepDeps, 'pool' | 'events' | 'clock'>;

/** Sum of every LLM call charged to the turn, failed attempts included. */
export async function turnCostUsd(pool: Deps['pool'], turnId: string): Promise<number> {
  const row = await pool.query<{ total: string | null }>(
    'SELECT SUM(cost_usd)::text AS total FROM llm_calls WHERE turn_id = $1',
    [turnId],
  );
  return Number(Number(row.rows[0].total ?? 0).toFixed(6));
}

export function createTurnLifecycle({ pool, events, clock }: Deps) {
  async function startTurn({ turnId }: { turnId: string }): Promise<void> {
    const now = clock();
    await pool.query(
      `UPDATE turns SET status = 'running', started_at = COALESCE(started_at, $2) WHERE id = $1 AND status = 'queued'`,
      [turnId, now],
    );
    const row = await pool.query<{ started_at: Date }>('SELECT started_at FROM turns WHERE id = $1', [turnId]);
    const startedAt = row.rows[0]?.started_at ?? now;
    await events.append(turnId, [
      { type: 'turn.started', data: { turn_id: turnId, at: startedAt.toISOString() }, dedupeKey: 'turn.started' },
    ]);
  }

  async function completeTurn(input: CompleteTurnInput): Promise<TurnResult> {
    const { turnId } = input;
    const current = await pool.query<{ status: string; result: TurnResult | null; started_at: Date | null }>(
      'SELECT status, result, started_at FROM turns WHERE id = $1',
      [turnId],
    );
    let result = current.rows[0]?.result ?? null;
    if (current.rows[0]?.status === 'running') {
      const now = clock();
      const startedAt = current.rows[0].started_at ?? now;
      result = {
        answer: input.answer,
        fact_sheet: input.factSheet,
        agents_used: input.agentsUsed,
        validator: input.validator,
        cost_usd: await turnCostUsd(pool, turnId),
        duration_ms: now.getTime() - startedAt.getTime(),
        ...(input.factCheck ? { fact_check: input.factCheck } : {}),
      };
      // The answer was complete before the memory step wrote what the turn taught (seed 002: memory,
      // then completion), so the turn's completed_at precedes its entries and seed 004's recipe
      // `GET /v1/memory?after=<completed_at>` lists them. Both instants are Postgres's, so no clock skew
      // between a worker and the database can reorder them.
      await pool.query(
        `UPDATE turns SET status = 'completed', result = $2,
           completed_at = LEAST($3::timestamptz,
             (SELECT min(created_at) - interval '1 millisecond' FROM memory_entries WHERE source_turn_id = $1))
         WHERE id = $1 AND status = 'running'`,
        [turnId, JSON.stringify(result), now],
      );
    }
    if (!result) throw new Error(`turn ${turnId} cannot complete from status ${current.rows[0]?.status}`);
    await events.append(turnId, [
      { type: 'turn.completed', data: { turn_id: turnId, result }, dedupeKey: 'turn.terminal' },
    ]);
    return result;
  }

  async function failTurn({ turnId, error }: FailTurnInput): Promise<void> {
    const lastFailedCall = await pool.query<{ request_id: string }>(
      `SELECT request_id FROM llm_calls WHERE turn_id = $1 AND outcome <> 'success' AND request_id IS NOT NULL
       ORDER BY created_at DESC LIMIT 1`,
      [turnId],
    );
    const requestId = error.request_id || lastFailedCall.rows[0]?.request_id || newId('request');
    await pool.query(
      `UPDATE turns SET status = 'failed', error = $2, completed_at = $3
       WHERE id = $1 AND status IN ('queued', 'running')`,
      [turnId, JSON.stringify({ ...error, request_id: requestId }), clock()],
    );
    const row = await pool.query<{ error: ErrorBody | null }>('SELECT error FROM turns WHERE id = $1', [turnId]);
    const stored = row.rows[0]?.error;
    // A turn that already completed keeps its completion; only a failed one gets turn.failed.
    if (stored) {
      // What the failed turn cost: every call charged to it, each failed attempt included.
      const cost = await turnCostUsd(pool, turnId);
      await events.append(turnId, [
        {
          type: 'turn.failed',
          data: { turn_id: turnId, error: stored, cost_usd: cost },
          dedupeKey: 'turn.terminal',
        },
      ]);
    }
  }

  return { startTurn, completeTurn, failTurn };
}
