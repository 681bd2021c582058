/**
 * Attempts of a turn. A failed turn is retried by resetting its workflow (`npm run turn:retry`, or
 * "Reset" in the Temporal Web UI): Temporal starts a new run that replays the history up to the failed
 * step and runs it again. The turn stays one turn, but its row and event log must say that a new
 * attempt began, without rewriting what the failed one left behind.
 *
 * The first activity of every run calls `enterTurnRun` (see worker/turn-run-interceptor.ts):
 * - the turn's first run claims it;
 * - a run the turn has not seen before opens a new attempt: the row goes back to `running` with
 *   `attempt + 1`, the failed attempt's error moves to `previous_attempts`, and `turn.retried` is
 *   appended after its `turn.failed` (a reset of a running turn works the same, with no error to
 *   keep); a completed turn refuses it;
 * - an activity of a superseded run (a straggler of the failed attempt) is refused, so it cannot
 *   write into the new attempt.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Pool } from 'pg';
import type { TurnErrorBody } from '../../contracts/errors';
import type { PreviousAttempt, TurnStatus } from '../../contracts/turn';
import type { EventLog } from '../../platform/event-log';
import { inTransaction } from '../../platform/pg-pool';

export type TurnRunEntry = 'claimed' | 'current' | 'reopened' | 'unknown_turn';

interface LockedTurn {
  status: TurnStatus;
  attempt: number;
  run_ids: string[];
  error: TurnErrorBody | null;
  completed_at: Date | null;
  previous_attempts: PreviousAttempt[];
}

type Retried = { attempt: number; previous: PreviousAttempt } | null;

export async function enterTurnRun(
  deps: { pool: Pool; events: EventLog; clock: () => Date },
  turnId: string,
  runId: string,
): Promise<TurnRunEntry> {
  // The common case, a turn's first run claiming it, in one statement: the conditional UPDATE takes the row
  // lock and re-checks the condition under it, as the transaction below would. Anything else (the run is
  // current already, superseded, or a retry) takes the transaction.
  const claimed = await deps.pool.query(
    `UPDATE turns SET run_ids = ARRAY[$2] WHERE id = $1 AND cardinality(run_ids) = 0`,
    [turnId, runId],
  );
  if (claimed.rowCount === 1) return 'claimed';
  const { entry, retried } = await inTransaction(
    deps.pool,
    async (client): Promise<{ entry: TurnRunEntry; retried: Retried }> => {
      const row = await client.query<LockedTurn>(
        'SELECT status, attempt, run_ids, error, completed_at, previous_attempts FROM turns WHERE id = $1 FOR UPDATE',
        [turnId],
      );
      const turn = row.rows[0];
      if (!turn) return { entry: 'unknown_turn', retried: null };
      if (turn.run_ids.at(-1) === runId) {
        const previous = turn.previous_attempts.at(-1);
        return { entry: 'current', retried: turn.attempt > 1 && previous ? { attempt: turn.attempt, previous } : null };
      }
      if (turn.run_ids.includes(runId)) {
        throw ApplicationFailure.nonRetryable(
          `run ${runId} of turn ${turnId} was superseded by a retry (run ${turn.run_ids.at(-1)})`,
          'TurnRunSupersededError',
        );
      }
      if (turn.run_ids.length === 0) {
        await client.query('UPDATE turns SET run_ids = ARRAY[$2] WHERE id = $1', [turnId, runId]);
        return { entry: 'claimed', retried: null };
      }
      if (turn.status === 'completed') {
        // A completed answer is never replaced: every activity of such a run is refused, so the run
        // fails without touching the turn.
        throw ApplicationFailure.nonRetryable(
          `turn ${turnId} is completed; its answer stands (run ${runId} refused)`,
          'TurnNotRetryableError',
        );
      }
      // A failed turn being retried; or a running one whose workflow an operator reset (Temporal
      // terminated the old run): either way the old attempt is over and this run is the next one.
      const previous: PreviousAttempt = {
        attempt: turn.attempt,
        error: turn.status === 'failed' ? turn.error : null,
        ended_at: (turn.status === 'failed' ? turn.completed_at : deps.clock())?.toISOString() ?? null,
      };
      await client.query(
        `UPDATE turns SET status = 'running', error = NULL, completed_at = NULL, attempt = attempt + 1,
         previous_attempts = previous_attempts || $2::jsonb, run_ids = array_append(run_ids, $3)
       WHERE id = $1`,
        [turnId, JSON.stringify([previous]), runId],
      );
      return { entry: 'reopened', retried: { attempt: turn.attempt + 1, previous } };
    },
  );
  if (retried) {
    // After the commit, because the event log takes the same row lock. A crash in between is repaired
    // by the run's next activity ('current' on a later attempt), and the dedupe key keeps it single.
    await deps.events.append(turnId, [
      {
        type: 'turn.retried',
        data: {
          turn_id: turnId,
          attempt: retried.attempt,
          previous_error: retried.previous.error,
          at: deps.clock().toISOString(),
        },
        dedupeKey: 'turn.retried',
      },
    ]);
  }
  return entry;
}
