/**
 * The per-turn event log in Postgres: the source of truth for SSE replay and live tailing.
 *
 * Gapless ids under concurrent writers: every append takes the turn row's lock and advances
 * `turns.last_event_id` in the same transaction as the inserts, so ids are handed out in commit
 * order and a rolled-back append leaves no hole. Deterministic events carry a `dedupeKey`; an append
 * whose key is already in the log is dropped, so a retried activity cannot duplicate them. Keys are
 * per attempt of the turn (see ../turn-attempts.ts): a retried turn's new attempt writes its own
 * events after the failed attempt's, which stay as they were.
 * Once the turn has ended, only its terminal event may still be written: a straggling activity of a
 * failed turn (a parallel agent still running when its sibling failed) cannot append after the end.
 * The commit notifies `turn_events` with `<turn_id>:<last_id>`; API processes LISTEN and fan out.
 */
import type { Pool, PoolClient } from 'pg';
import { metrics } from './metrics';
import { inTransaction } from './pg-pool';
import { TERMINAL_EVENTS, type TurnEvent, type TurnEventData, type TurnEventType } from '../contracts/events';

export const EVENTS_CHANNEL = 'turn_events';

/**
 * An event to append, its `data` typed by its `type` (contracts/events.ts `eventDataSchemas`), so a
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
  override name = 'TurnNotFoundError';
}

export interface EventLog {
  /** Appends in order; returns the events actually written (duplicates by dedupeKey are skipped). */
  append(turnId: string, events: NewTurnEvent[]): Promise<TurnEvent[]>;
  /** Events with id > afterId, in order. */
  readAfter(turnId: string, afterId: number, limit?: number): Promise<TurnEvent[]>;
}

/**
 * Appends to the turn's log inside the caller's transaction, which then holds the turn row's lock until
 * it commits. The terminal transition (platform/turn-ending.ts) uses it to write the row's end and its
 * terminal event in one commit; everything else goes through `EventLog.append`.
 */
export async function appendTurnEvents(
  client: PoolClient,
  turnId: string,
  events: NewTurnEvent[],
): Promise<TurnEvent[]> {
  if (events.length === 0) return [];
  const locked = await client.query<{ last_event_id: number; attempt: number; status: string }>(
    'SELECT last_event_id, attempt, status FROM turns WHERE id = $1 FOR UPDATE',
    [turnId],
  );
  if (locked.rowCount === 0) throw new TurnNotFoundError(`turn ${turnId} does not exist`);
  const { attempt, status } = locked.rows[0];
  let lastId = locked.rows[0].last_event_id;
  const ended = status === 'completed' || status === 'failed';
  const writable = events
    .filter((e) => !ended || TERMINAL_EVENTS.includes(e.type))
    .map((e) => (e.dedupeKey && attempt > 1 ? { ...e, dedupeKey: `attempt${attempt}:${e.dedupeKey}` } : e));

  const keys = writable.map((e) => e.dedupeKey).filter((k): k is string => k !== undefined);
  const seen = new Set<string>();
  if (keys.length > 0) {
    const existing = await client.query<{ dedupe_key: string }>(
      'SELECT dedupe_key FROM turn_events WHERE turn_id = $1 AND dedupe_key = ANY($2::text[])',
      [turnId, keys],
    );
    for (const row of existing.rows) seen.add(row.dedupe_key);
  }
  const fresh: Array<NewTurnEvent & { id: number }> = [];
  for (const event of writable) {
    if (event.dedupeKey !== undefined) {
      if (seen.has(event.dedupeKey)) continue;
      seen.add(event.dedupeKey);
    }
    fresh.push({ ...event, id: ++lastId });
  }
  if (fresh.length === 0) return [];

  await client.query(
    `INSERT INTO turn_events (turn_id, id, type, data, dedupe_key)
     SELECT $1, * FROM unnest($2::int[], $3::text[], $4::json[], $5::text[])`,
    [
      turnId,
      fresh.map((e) => e.id),
      fresh.map((e) => e.type),
      fresh.map((e) => JSON.stringify(e.data)),
      fresh.map((e) => e.dedupeKey ?? null),
    ],
  );
  await client.query('UPDATE turns SET last_event_id = $2 WHERE id = $1', [turnId, lastId]);
  await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, `${turnId}:${lastId}`]);
  return fresh.map(({ id, type, data }) => ({ id, type, data }));
}

export function createEventLog(pool: Pool): EventLog {
  return {
    async append(turnId, events) {
      if (events.length === 0) return [];
      const appended = metrics.eventAppendStarted();
      return inTransaction(pool, (client) => appendTurnEvents(client, turnId, events)).finally(appended);
    },

    async readAfter(turnId, afterId, limit = 1000) {
      const rows = await pool.query<{ id: number; type: TurnEventType; data: Record<string, unknown> }>(
        'SELECT id, type, data FROM turn_events WHERE turn_id = $1 AND id > $2 ORDER BY id LIMIT $3',
        [turnId, afterId, limit],
      );
      return rows.rows;
    },
  };
}
