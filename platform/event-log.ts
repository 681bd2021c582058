/**
 * The per-turn event log in Postgres: the source of truth for SSE replay and live tailing.
 *
 * One statement per append (the SQL function `append_turn_events`, see `appendTurnEvents` below).
 * Gapless ids under concurrent writers: every append takes the turn row's lock and advances
 * `turns.last_event_id` in the same transaction as the inserts, so ids are handed out in commit
 * order and a rolled-back append leaves no hole. Deterministic events carry a `dedupeKey`; an append
 * whose key is already in the log is dropped, so a retried activity cannot duplicate them. Keys are
 * per attempt of the turn (see ../turn-attempts.ts): a retried turn's new attempt writes its own
 * events after the failed attempt's, which stay as they were.
 * Once the turn has ended, only its terminal event may still be written: a straggling activity of a
 * failed turn (a parallel agent still running when its sibling failed) cannot append after the end.
 * The commit notifies `turn_events` with `<turn_id>:<last_id>` and, when they fit, the events themselves
 * (./event-notification.ts); API processes LISTEN and fan out.
 */
import type { Pool, PoolClient } from 'pg';
import type { FailureType } from '../contracts/failure-types';
import { metrics } from './metrics';
import { TERMINAL_EVENTS, type TurnEvent, type TurnEventData, type TurnEventType } from '../contracts/event-data';

export const EVENTS_CHANNEL = 'turn_events';

/**
 * An event to append, its `data` typed by its `type` (contracts/event-data.ts `eventDataSchemas`), so a
 * misspelt field or a value of the wrong type does not compile.
 */
export type NewTurnEvent<T extends TurnEventType = TurnEventType> = {
  [K in T]: {
    type: K;
    data: TurnEventData<K>;
    /** Identity of a deterministic event (e.g. `agent.started:data_science`); omit for token deltas. */
    dedupeKey?: string;
  };
}[T];

export class TurnNotFoundError extends Error {
  override name: FailureType = 'TurnNotFoundError';
}

export interface EventLog {
  /** Appends in order; returns the events actually written (duplicates by dedupeKey are skipped). */
  append(turnId: string, events: NewTurnEvent[]): Promise<TurnEvent[]>;
  /** Events with id > afterId, in order. */
  readAfter(turnId: string, afterId: number, limit?: number): Promise<TurnEvent[]>;
  /**
   * The events of the turn's current attempt whose dedupe key starts with `keyPrefix`, in order, each with the
   * rest of its key: how a retried step finds what its earlier attempts wrote (activities/runtime/narration.ts).
   */
  readKeyed(turnId: string, keyPrefix: string): Promise<Array<{ key: string; data: Record<string, unknown> }>>;
}

/** Anything that runs a query: the pool (autocommit) or a client inside a transaction. */
type Queryable = Pick<Pool, 'query'> | Pick<PoolClient, 'query'>;

/** What `append_turn_events` reports of each event it wrote: its position in the batch (1-based) and its id. */
interface Appended {
  ord: number;
  id: number;
}

/** Postgres's `no_data_found`, which `append_turn_events` raises for a turn that does not exist. */
const NO_DATA_FOUND = 'P0002';

/**
 * Appends to the turn's log in one statement: the SQL function `append_turn_events` (its migration,
 * prisma/migrations/20261210100000_append_turn_events_function) takes the row lock, drops duplicates
 * and what comes after the end, inserts, advances `last_event_id` and notifies — every guarantee of this
 * file's header, in one round trip. On the pool it is its own transaction. Inside a caller's transaction
 * (the terminal transition, platform/turn-ending.ts, which writes the row's end and its terminal event in
 * one commit) the turn row's lock is then held until that commits.
 */
export async function appendTurnEvents(db: Queryable, turnId: string, events: NewTurnEvent[]): Promise<TurnEvent[]> {
  if (events.length === 0) return [];
  let written;
  try {
    written = await db.query<Appended>('SELECT ord, id FROM append_turn_events($1, $2, $3, $4, $5)', [
      turnId,
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.dedupeKey ?? null),
      TERMINAL_EVENTS,
    ]);
  } catch (err) {
    if ((err as { code?: unknown }).code === NO_DATA_FOUND)
      throw new TurnNotFoundError(`turn ${turnId} does not exist`);
    throw err;
  }
  return written.rows.map(({ ord, id }) => withId(events[ord - 1], id));
}

/** The appended event with the id the log gave it, still typed by its type. */
function withId<T extends TurnEventType>({ type, data }: NewTurnEvent<T>, id: number): TurnEvent<T> {
  return { id, type, data };
}

/**
 * An event read back from the log (a row of `turn_events`, or the copy a notification carries), typed by its
 * `type`. Its data is taken on trust here, the one place the read side does so, and not parsed (a zod pass per
 * token delta on every stream): the rows of `turn_events` are written by `appendTurnEvents` alone, from a
 * `NewTurnEvent` whose data its type typed at compile time (this version's schemas, or for a turn that runs
 * across a deploy, the previous version's).
 */
export function storedTurnEvent(id: number, type: TurnEventType, data: unknown): TurnEvent {
  return { id, type, data } as TurnEvent;
}

export function createEventLog(pool: Pool): EventLog {
  return {
    async append(turnId, events) {
      if (events.length === 0) return [];
      const appended = metrics.eventAppendStarted();
      return appendTurnEvents(pool, turnId, events).finally(appended);
    },

    async readAfter(turnId, afterId, limit = 1000) {
      const rows = await pool.query<{ id: number; type: TurnEventType; data: unknown }>(
        'SELECT id, type, data FROM turn_events WHERE turn_id = $1 AND id > $2 ORDER BY id LIMIT $3',
        [turnId, afterId, limit],
      );
      return rows.rows.map(({ id, type, data }) => storedTurnEvent(id, type, data));
    },

    async readKeyed(turnId, keyPrefix) {
      // Keys are stored per attempt of the turn (`attempt<N>:` before them from the second on: see the header).
      const rows = await pool.query<{ key: string; data: Record<string, unknown> }>(
        `SELECT substr(e.dedupe_key, length(p.prefix) + 1) AS key, e.data
           FROM turns t
          CROSS JOIN LATERAL (
            SELECT CASE WHEN t.attempt > 1 THEN 'attempt' || t.attempt || ':' ELSE '' END || $2 AS prefix
          ) p
           JOIN turn_events e ON e.turn_id = t.id AND starts_with(e.dedupe_key, p.prefix)
          WHERE t.id = $1
          ORDER BY e.id`,
        [turnId, keyPrefix],
      );
      return rows.rows;
    },
  };
}
