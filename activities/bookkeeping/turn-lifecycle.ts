/**
 * Turn bookkeeping: the Postgres row follows the workflow (queued → running → completed | failed,
 * never backwards). The end is one transaction (platform/turn-ending.ts): the terminal status and the
 * terminal event commit together, and whichever of completion and failure comes second writes nothing.
 * Each activity is idempotent, so a retry after a crash finishes the job instead of repeating it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { TurnErrorBody } from '../../contracts/errors';
import type { TurnPath } from '../../contracts/steps';
import type {
  AgentName,
  FactCheckOutcome,
  FactEntry,
  PersonalAnchorEntry,
  TurnResult,
  ValidatorCounts,
} from '../../contracts/turn';
import { newId } from '../../platform/ids';
import { metrics } from '../../platform/metrics';
import { endTurn } from '../../platform/turn-ending';
import type { StepDeps } from '../runtime/step-deps';

export interface CompleteTurnInput {
  turnId: string;
  answer: string;
  factSheet: FactEntry[];
  /**
   * The coach's anchors the answer could cite (none when the coach did not run). Absent on a path with no
   * synthesis, and when a history recorded before anchors had a field of their own replays: its synthesis
   * put them on the fact sheet, with the source `personal_anchor`.
   */
  personalAnchors?: PersonalAnchorEntry[];
  agentsUsed: AgentName[];
  validator: ValidatorCounts;
  /** The fact-check's outcome (step 7b); absent when a history recorded before the check was binding replays. */
  factCheck?: FactCheckOutcome;
  /** Which way the turn went, for the metrics; absent from a turn whose workflow code predates it. */
  path?: TurnPath;
}

export interface FailTurnInput {
  turnId: string;
  error: TurnErrorBody;
  /** Which way the turn went, for the metrics; absent when it failed before its path was chosen. */
  path?: TurnPath;
}

type Deps = Pick<StepDeps, 'pool' | 'events' | 'clock'>;

/** The sum of every LLM call charged to the turn (failed attempts included), as the ledger adds it up. */
const roundedUsd = (total: string | null) => Number(Number(total ?? 0).toFixed(6));

/** The fact sheet's source for an anchor, from syntheses recorded before anchors had a field of their own. */
const LEGACY_ANCHOR_SOURCE = 'personal_anchor';

/**
 * `result.personal_anchors`: the anchors synthesis returned, or none. Left out, as on the turns completed before
 * it was a field, when a synthesis recorded before then put the anchors on the fact sheet.
 */
function personalAnchorsOf({ personalAnchors, factSheet }: CompleteTurnInput): PersonalAnchorEntry[] | undefined {
  if (personalAnchors) return personalAnchors;
  return factSheet.some((entry) => entry.source === LEGACY_ANCHOR_SOURCE) ? undefined : [];
}

export function createTurnLifecycle({ pool, events, clock }: Deps) {
  async function startTurn({ turnId }: { turnId: string }): Promise<void> {
    const now = clock();
    // One statement: the transition, and the start time it set or (a retry, or a turn already past queued)
    // the one already on the row; the outer SELECT sees the row as it was before the UPDATE.
    const { rows } = await pool.query<{ moved: Date | null; existing: Date | null }>(
      `WITH moved AS (
         UPDATE turns SET status = 'running', started_at = COALESCE(started_at, $2) WHERE id = $1 AND status = 'queued'
         RETURNING started_at)
       SELECT (SELECT started_at FROM moved) AS moved, (SELECT started_at FROM turns WHERE id = $1) AS existing`,
      [turnId, now],
    );
    // Counted by the attempt that moved it out of the queue, not by a retry that finds it running.
    if (rows[0].moved) metrics.turnStarted();
    const startedAt = rows[0].moved ?? rows[0].existing ?? now;
    await events.append(turnId, [
      { type: 'turn.started', data: { turn_id: turnId, at: startedAt.toISOString() }, dedupeKey: 'turn.started' },
    ]);
  }

  async function completeTurn(input: CompleteTurnInput): Promise<TurnResult> {
    const { turnId } = input;
    // The start time and the cost in one statement (one row, whether the turn's row exists or not).
    const current = await pool.query<{ started_at: Date | null; total: string | null }>(
      `SELECT (SELECT started_at FROM turns WHERE id = $1) AS started_at,
              (SELECT SUM(cost_usd)::text FROM llm_calls WHERE turn_id = $1) AS total`,
      [turnId],
    );
    const now = clock();
    const startedAt = current.rows[0].started_at ?? now;
    const personalAnchors = personalAnchorsOf(input);
    const result: TurnResult = {
      answer: input.answer,
      fact_sheet: input.factSheet,
      ...(personalAnchors ? { personal_anchors: personalAnchors } : {}),
      agents_used: input.agentsUsed,
      validator: input.validator,
      cost_usd: roundedUsd(current.rows[0].total),
      duration_ms: now.getTime() - startedAt.getTime(),
      ...(input.factCheck ? { fact_check: input.factCheck } : {}),
    };
    const end = await endTurn(pool, turnId, { status: 'completed', result }, now, input.path);
    // A retry after this activity's own commit finds the completion it wrote.
    if (end.status === 'completed' && end.result) return end.result;
    // The turn failed first (a cancellation won the race): its failure stands, on the row and the stream.
    throw ApplicationFailure.nonRetryable(
      `turn ${turnId} had already ended (${end.error?.code ?? end.status}); its completion was not recorded`,
      'TurnEndedError',
    );
  }

  async function failTurn({ turnId, error, path }: FailTurnInput): Promise<void> {
    const lastFailedCall = await pool.query<{ request_id: string }>(
      `SELECT request_id FROM llm_calls WHERE turn_id = $1 AND outcome <> 'success' AND request_id IS NOT NULL
       ORDER BY created_at DESC LIMIT 1`,
      [turnId],
    );
    const requestId = error.request_id || lastFailedCall.rows[0]?.request_id || newId('request');
    // A turn that already completed keeps its completion, and its log keeps turn.completed.
    await endTurn(pool, turnId, { status: 'failed', error: { ...error, request_id: requestId } }, clock(), path);
  }

  return { startTurn, completeTurn, failTurn };
}
