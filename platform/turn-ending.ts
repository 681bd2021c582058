/**
 * The end of a turn is one transition: the row's terminal status and the log's terminal event commit
 * together, or neither does. Three writers can race to end a turn: the workflow's completion, its
 * failure (a cancellation arriving while the completion is being recorded), and the reconciler of
 * abandoned turns. Each takes the turn row's lock first, sets the terminal status only if the turn is
 * still queued or running, and appends the event in the same transaction; the loser writes nothing of
 * its own ending. So the status a client reads and the last event it streams always agree.
 *
 * A writer that finds the turn already ended still makes sure the log ends with the event the row
 * says (the `turn.terminal` dedupe key drops it when it is there): a row that was ended without its
 * event (written in two commits, with a crash between) gets the missing event in the row's terms.
 */
import type { Pool, PoolClient } from 'pg';
import { docsUrl, type TurnErrorBody } from '../contracts/errors';
import type { TurnResult } from '../contracts/turn';
import type { TurnPath } from '../contracts/steps';
import { appendTurnEvents, TurnNotFoundError, type NewTurnEvent } from './event-log';
import { newId } from './ids';
import { metrics } from './metrics';
import { inTransaction } from './pg-pool';
import { recordWebhookEvents, turnEndedEvent, type OutboxEvent } from './webhooks/outbox';

export type TurnEnding = { status: 'completed'; result: TurnResult } | { status: 'failed'; error: TurnErrorBody };

export interface EndedTurn {
  /** Whether this call ended the turn; false when it had already ended and nothing of this ending was written. */
  ended: boolean;
  status: 'completed' | 'failed';
  result: TurnResult | null;
  error: TurnErrorBody | null;
}

/** The row as a transition leaves it: every ending writes its result or its error with the status. */
type EndedRow =
  | { status: 'completed'; result: TurnResult; error: null }
  | { status: 'failed'; result: null; error: TurnErrorBody }
  | { status: 'queued' | 'running'; result: null; error: null };

/** The error of a turn whose workflow closed, or never ran, without recording an outcome. */
export function turnAbandoned(message: string): TurnErrorBody {
  return { code: 'turn_abandoned', message, request_id: newId('request'), docs_url: docsUrl('turn_abandoned') };
}

/**
 * Ends the turn with `ending` unless it has already ended; `at` is its completed_at. `path` is the way
 * the turn went, for the metrics, when the writer knows it (the workflow does, the reconciler does not).
 */
export async function endTurn(
  pool: Pool,
  turnId: string,
  ending: TurnEnding,
  at: Date,
  path: TurnPath | 'unknown' = 'unknown',
): Promise<EndedTurn> {
  const end = await inTransaction(pool, async (client) => {
    // The lock, and the row as it stands: with the lock held, it is also the row as a writer that finds the
    // turn ended leaves it.
    const locked = await client.query<EndedRow & TurnRowForWebhook>(
      `SELECT ${ENDED_ROW_COLUMNS} FROM turns WHERE id = $1 FOR UPDATE`,
      [turnId],
    );
    if (locked.rowCount === 0) throw new TurnNotFoundError(`turn ${turnId} does not exist`);
    const transitioned = isEnded(locked.rows[0]) ? undefined : await setTerminalStatus(client, turnId, ending, at);
    const row = transitioned ?? locked.rows[0];
    if (!isEnded(row)) throw new Error(`turn ${turnId} is ${row.status} after its terminal transition`);
    await appendTurnEvents(client, turnId, [await terminalEvent(client, turnId, row)]);
    // The webhook event commits with the transition it reports, written by the writer that made it.
    if (transitioned) await recordWebhookEvents(client, [turnEndedWebhook(turnId, row.status, transitioned)]);
    return { ended: transitioned !== undefined, status: row.status, result: row.result, error: row.error };
  });
  // Counted once per turn, by the writer whose transition committed.
  if (end.ended) metrics.turnEnded({ status: end.status, path, code: end.error?.code });
  return end;
}

/** What the turn.ended webhook event says of the turn (./webhooks/outbox.ts). */
interface TurnRowForWebhook {
  user_id: string;
  attempt: number;
  error_code: string | null;
  created_at: Date;
  completed_at: Date | null;
}

/** The columns of EndedRow and TurnRowForWebhook. */
const ENDED_ROW_COLUMNS = `status, result, error, user_id, attempt, error->>'code' AS error_code, created_at, completed_at`;

const isEnded = (row: EndedRow): row is Extract<EndedRow, { status: 'completed' | 'failed' }> =>
  row.status === 'completed' || row.status === 'failed';

/** The row as the transition left it, or undefined when the turn was not queued or running (nothing written). */
async function setTerminalStatus(
  client: PoolClient,
  turnId: string,
  ending: TurnEnding,
  at: Date,
): Promise<(EndedRow & TurnRowForWebhook) | undefined> {
  const res =
    ending.status === 'completed'
      ? // The answer was complete before the memory step wrote what the turn taught (memory,
        // then completion), so completed_at precedes the turn's entries and the recipe
        // `GET /v1/memory?after=<completed_at>` lists them; both instants are Postgres's.
        await client.query(
          `UPDATE turns SET status = 'completed', result = $2,
             completed_at = LEAST($3::timestamptz,
               (SELECT min(created_at) - interval '1 millisecond' FROM memory_entries WHERE source_turn_id = $1))
           WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${ENDED_ROW_COLUMNS}`,
          [turnId, JSON.stringify(ending.result), at],
        )
      : await client.query(
          `UPDATE turns SET status = 'failed', error = $2, completed_at = $3
           WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${ENDED_ROW_COLUMNS}`,
          [turnId, JSON.stringify(ending.error), at],
        );
  return res.rows[0] as (EndedRow & TurnRowForWebhook) | undefined;
}

async function terminalEvent(
  client: PoolClient,
  turnId: string,
  row: Extract<EndedRow, { status: 'completed' | 'failed' }>,
): Promise<NewTurnEvent> {
  if (row.status === 'completed') {
    return { type: 'turn.completed', data: { turn_id: turnId, result: row.result }, dedupeKey: 'turn.terminal' };
  }
  // What the failed turn cost: every call charged to it, each failed attempt included.
  const cost = await client.query<{ total: string | null }>(
    'SELECT SUM(cost_usd)::text AS total FROM llm_calls WHERE turn_id = $1',
    [turnId],
  );
  return {
    type: 'turn.failed',
    data: { turn_id: turnId, error: row.error, cost_usd: Number(Number(cost.rows[0].total ?? 0).toFixed(6)) },
    dedupeKey: 'turn.terminal',
  };
}

function turnEndedWebhook(turnId: string, status: 'completed' | 'failed', turn: TurnRowForWebhook): OutboxEvent {
  return turnEndedEvent({
    id: turnId,
    userId: turn.user_id,
    attempt: turn.attempt,
    status,
    errorCode: turn.error_code,
    createdAt: turn.created_at,
    completedAt: turn.completed_at!,
  });
}
