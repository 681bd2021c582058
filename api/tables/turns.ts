/**
 * The turn service owns the `turns` table for the API: creation under the per-user cost and concurrency
 * caps and its Idempotency-Keys, reads scoped to the owner, and the Turn resource shape.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import type { TurnErrorBody } from '../../contracts/errors';
import { TERMINAL_EVENTS, type TurnEventType } from '../../contracts/event-data';
import { IDEMPOTENCY_KEY_TTL_HOURS } from '../../contracts/idempotency';
import { turnIdSchema } from '../../contracts/ids';
import type {
  ListTurnsQuery,
  Message,
  PreviousAttempt,
  Turn,
  TurnContext,
  TurnDataSnapshot,
  TurnList,
  TurnResult,
  TurnStatus,
} from '../../contracts/turn';
import { newId } from '../../platform/ids';
import type { InputRequest } from '../../contracts/interaction';
import { ApiError, notFound } from '../errors';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency';
import type { CostCapDefaults } from '../../platform/cost-caps';
import { refuseTurnOverCostCap, turnCostCapReached } from './cost-caps';
import { refuseOverTurnRateLimit, TURN_RATE_WINDOW_SECONDS } from './turn-rate-limit';

export interface TurnRow {
  id: string;
  user_id: string;
  status: TurnStatus;
  messages: Message[];
  context: TurnContext;
  result: TurnResult | null;
  error: TurnErrorBody | null;
  created_at: Date;
  completed_at: Date | null;
  attempt: number;
  previous_attempts: PreviousAttempt[];
  last_event_id: number;
  /** A failed turn's ledger sum (numeric, as text), failed attempts included; null for other turns. */
  ledger_cost_usd: string | null;
  /** What the turn's snapshot of the user's data holds (platform/health-data/snapshot.ts); null before one is taken. */
  data_snapshot: TurnDataSnapshot | null;
  /** The question the turn waits on (workflows/ask-user.ts); null when it waits on none. */
  pending_input: InputRequest | null;
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
    status: row.status === 'running' && row.pending_input ? 'waiting_for_input' : row.status,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    messages: row.messages,
    result: row.status === 'completed' ? row.result : null,
    error: row.status === 'failed' ? row.error : null,
    attempt: row.attempt,
    previous_attempts: row.previous_attempts,
    cost_usd: costOf(row),
    last_event_id: row.last_event_id,
    data_snapshot: row.data_snapshot,
    ...(row.status === 'running' && row.pending_input ? { pending_input: row.pending_input } : {}),
  };
}

/** A turn's columns as TurnRow has them; `messages` is what to read as its messages (a list may leave them out). */
const turnColumns = (
  messages = 'messages',
) => `id, user_id, status, ${messages} AS messages, context, result, error, created_at, completed_at, attempt,
  previous_attempts, last_event_id,
  -- By the turn's id: create_queued_turn's row (read as turns too) has no such column, and a new turn waits on nothing.
  (SELECT t.pending_input FROM turns t WHERE t.id = turns.id) AS pending_input,
  -- Only a failed turn needs the ledger's sum (a completed one has it in its result): CASE skips the rest.
  CASE WHEN status = 'failed' THEN (SELECT COALESCE(SUM(cost_usd), 0) FROM llm_calls WHERE turn_id = turns.id)::text
  END AS ledger_cost_usd,
  -- The snapshot's counts only, never its rows: a turn is read far more often than its data is.
  (SELECT jsonb_build_object('taken_at', to_char(s.taken_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
     'daily_rows', s.daily_rows, 'workouts', s.workout_rows, 'lab_results', s.lab_rows,
     'lab_results_withheld', s.labs_withheld, 'profile', s.profile IS NOT NULL)
   FROM turn_data_snapshots s WHERE s.turn_id = turns.id) AS data_snapshot`;
const TURN_COLUMNS = turnColumns();

export interface IdempotentRequest {
  key: string;
  /** See hashCreateTurnRequest: the same key with another body is refused. */
  requestHash: string;
}

/** What create_queued_turn answers (prisma/migrations/20261213100000_create_queued_turn_function). */
type CreationOutcome =
  'created' | 'replayed' | 'key_reused' | 'cost_cap' | 'concurrency' | 'rate_limited' | 'account_deleting';

/**
 * The creation's one statement. The function's row is named `turns`, so that TURN_COLUMNS reads the created
 * turn as it reads a stored one (with the other outcomes, all its columns are null). Its ledger sum and its
 * snapshot's counts come from the statement's own snapshot, which predates the insert: right for a turn just
 * created, which is queued and has no snapshot yet. A replay's turn is read afresh instead (see below).
 */
const CREATE_QUEUED_TURN_SQL = `SELECT outcome, in_flight, retry_after, ${TURN_COLUMNS}
  FROM create_queued_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) AS turns`;

/**
 * Inserts a queued turn unless the user has reached a cost cap, already has `maxInFlight` queued or running
 * turns, or created `maxPerMinute` in the last minute (checked in that order: a burst meets the in-flight cap
 * before the rate). Two statements, in autocommit: the cost cap's decision (one more statement when a cap
 * applies to the user: their spend), then create_queued_turn, which takes the user's row lock and checks and
 * writes under it. The lock serialises concurrent creations, so the in-flight cap and the rate hold under
 * any number of racing POSTs across API processes.
 *
 * With an Idempotency-Key that the user sent with the same body in the last 24 h, the turn it created
 * is returned instead (`replayed`), cap or not: the request is the one already admitted. Racing
 * requests with one key wait on the same lock, so only the first creates a turn.
 */
export async function createQueuedTurn(
  pool: Pool,
  args: {
    userId: string;
    messages: Message[];
    context: TurnContext;
    maxInFlight: number;
    costCaps: CostCapDefaults;
    maxPerMinute: number;
    idempotency?: IdempotentRequest;
  },
): Promise<{ turn: TurnRow; replayed: boolean }> {
  const { idempotency } = args;
  const now = new Date();
  const capReached = await turnCostCapReached(pool, args.userId, args.costCaps, now);
  const { rows } = await pool.query<
    TurnRow & { outcome: CreationOutcome; in_flight: number | null; retry_after: number | null }
  >(CREATE_QUEUED_TURN_SQL, [
    args.userId,
    newId('turn'),
    JSON.stringify(args.messages),
    JSON.stringify(args.context),
    capReached !== null,
    args.maxInFlight,
    TURN_RATE_WINDOW_SECONDS,
    args.maxPerMinute,
    idempotency?.key ?? null,
    idempotency?.requestHash ?? null,
    IDEMPOTENCY_KEY_TTL_HOURS,
  ]);
  const { outcome, in_flight: inFlight, retry_after: retryAfter, ...turn } = rows[0];
  switch (outcome) {
    case 'created':
      return { turn, replayed: false };
    case 'replayed': {
      // Read in a statement of its own: the creation's snapshot predates its wait for the lock, and the
      // turn may have moved on since (its ledger sum, its snapshot's counts).
      const existing = await pool.query<TurnRow>(`SELECT ${TURN_COLUMNS} FROM turns WHERE id = $1`, [turn.id]);
      // Gone in between: its workflow never started, and its key went with it (ON DELETE CASCADE). As for a
      // retry with that key after the discard, the request starts afresh.
      if (existing.rowCount === 0) return createQueuedTurn(pool, args);
      return { turn: existing.rows[0], replayed: true };
    }
    case 'key_reused':
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
        IDEMPOTENCY_KEY_HEADER,
      );
    case 'cost_cap':
      return refuseTurnOverCostCap(capReached!, now);
    case 'concurrency':
      throw new ApiError(
        'concurrency_limit_exceeded',
        `You already have ${inFlight} turns in flight; at most ${args.maxInFlight} may be queued or running at once.`,
        undefined,
        { 'Retry-After': '5' },
      );
    case 'rate_limited':
      refuseOverTurnRateLimit(retryAfter, args.maxPerMinute);
      break;
    case 'account_deleting':
      // The request was authenticated just before the deletion revoked the account's keys (./account.ts).
      throw new ApiError('invalid_api_key', 'The API key has been revoked: its account is being deleted.');
  }
  throw new Error(`create_queued_turn answered ${String(outcome)}`);
}

/**
 * Used when the workflow could not be started: the turn never existed as far as the client knows. Its
 * Idempotency-Key goes with it (ON DELETE CASCADE), so a retry with that key starts afresh. False when
 * the turn is no longer a bare queued row (its workflow did start and has written to it).
 */
export async function discardQueuedTurn(pool: Pool, turnId: string): Promise<boolean> {
  const res = await pool.query(`DELETE FROM turns WHERE id = $1 AND status = 'queued' AND last_event_id = 0`, [turnId]);
  return res.rowCount === 1;
}

export async function findTurnForUser(pool: Pool, userId: string, turnId: string): Promise<TurnRow | null> {
  const rows = await pool.query<TurnRow>(`SELECT ${TURN_COLUMNS} FROM turns WHERE id = $1 AND user_id = $2`, [
    turnId,
    userId,
  ]);
  return rows.rows[0] ?? null;
}

/**
 * A list's position: the last turn's `created_at` exactly as stored, then its id. The cursor carries it
 * as UTC wall time to the millisecond (the column's precision), whatever the session's time zone.
 */
const TURN_POSITION = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS')`;
const turnCursorSchema = z.tuple([
  z.string().refine((wall) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/.test(wall) && isCalendarTime(wall)),
  turnIdSchema,
]);

/** A wall time Postgres accepts as a timestamp: a real day of a real month (not 2026-02-30), no year 0000. */
function isCalendarTime(wall: string): boolean {
  const parsed = new Date(`${wall}Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 23) === wall && !wall.startsWith('0000');
}

function encodeTurnCursor(position: string, id: string): string {
  return Buffer.from(JSON.stringify([position, id])).toString('base64url');
}

function decodeTurnCursor(cursor: string): [position: string, id: string] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const parsed = turnCursorSchema.safeParse(decoded);
  if (!parsed.success) {
    throw new ApiError('invalid_field', 'cursor: not a next_cursor this API returned.', 'cursor');
  }
  return parsed.data;
}

/**
 * The most bytes of conversation one page of turns carries: past it, the page ends early (`has_more` then
 * says there is more). A turn may keep up to 100 messages of 20,000 characters, megabytes of text, and a
 * page of 100 such turns read at once would hold gigabytes in the API's memory. The first turn is always
 * on its page, so a page carries at most this and one turn's conversation.
 */
export const TURN_PAGE_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * One page of the user's turns, newest first by created_at then id, so pages neither repeat nor skip
 * a turn even when several share a millisecond. Only the user's own turns: the WHERE starts there.
 * A turn whose predecessors on the page already carry TURN_PAGE_MESSAGE_BYTES of conversation comes back
 * without its messages, only to mark where the page ends.
 */
export async function listTurnsForUser(pool: Pool, userId: string, query: ListTurnsQuery): Promise<TurnList> {
  const params: unknown[] = [userId];
  const param = (value: unknown) => params.push(value);
  const where = ['user_id = $1'];
  // A turn waiting for input is stored, and filtered, as running.
  if (query.status) where.push(`status = $${param(query.status)}`);
  if (query.cursor) {
    const [position, id] = decodeTurnCursor(query.cursor);
    where.push(`(created_at, id) < ($${param(position)}::timestamp AT TIME ZONE 'UTC', $${param(id)})`);
  }
  const order = 'ORDER BY created_at DESC, id DESC';
  const { rows } = await pool.query<TurnRow & { position: string; messages_bytes_before: string }>(
    `SELECT ${turnColumns(`CASE WHEN messages_bytes_before < $${param(TURN_PAGE_MESSAGE_BYTES)} THEN messages END`)},
            ${TURN_POSITION} AS position, messages_bytes_before
     FROM (SELECT *, SUM(octet_length(messages::text)) OVER (${order} ROWS UNBOUNDED PRECEDING)
                     - octet_length(messages::text) AS messages_bytes_before
           FROM turns WHERE ${where.join(' AND ')} ${order} LIMIT $${param(query.limit + 1)}) turns
     ${order}`,
    params,
  );
  const full = rows.findIndex((row) => Number(row.messages_bytes_before) >= TURN_PAGE_MESSAGE_BYTES);
  const page = rows.slice(0, Math.min(query.limit, full === -1 ? rows.length : full));
  const hasMore = rows.length > page.length;
  const last = page[page.length - 1];
  return {
    data: page.map(toTurnResource),
    next_cursor: hasMore ? encodeTurnCursor(last.position, last.id) : null,
    has_more: hasMore,
  };
}

/** Another user's turn is indistinguishable from a missing one (404), by design. */
export async function getTurnForUserOrThrow(pool: Pool, userId: string, turnId: string): Promise<TurnRow> {
  const row = await findTurnForUser(pool, userId, turnId);
  if (!row) throw notFound('Turn');
  return row;
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
 * `last_event_id` (until an operator retries it). The status alone does not say so for a row whose
 * terminal event was written in a separate commit, or never: platform/turn-ending.ts commits both
 * together, but rows ended before it may lack the event.
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
