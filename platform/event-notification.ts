/**
 * What an event append's commit notifies on `turn_events` (the SQL function `append_turn_events`, its
 * latest migration): `<turn_id>:<last_id>`, followed by `:` and the appended events as a JSON array of
 * `[id, type, data]` when they fit in a notification (Postgres caps a payload at 8000 bytes). An API
 * process delivers carried events without reading them back; for the others it reads the log.
 */
import type { TurnEvent, TurnEventType } from '../contracts/event-data';
import { storedTurnEvent } from './event-log';

export interface EventNotification {
  turnId: string;
  /** The id of the last event the append wrote. */
  lastId: number;
  /** The appended events in id order, or null when the append was too large to carry them. Parsed on call. */
  events(): TurnEvent[] | null;
}

/** The notification, or null for a payload that is not one (nothing of it is trusted further). */
export function parseEventNotification(payload: string | undefined): EventNotification | null {
  if (!payload) return null;
  const turnEnd = payload.indexOf(':');
  if (turnEnd <= 0) return null;
  const idEnd = payload.indexOf(':', turnEnd + 1);
  const lastId = Number(payload.slice(turnEnd + 1, idEnd < 0 ? undefined : idEnd));
  if (!Number.isSafeInteger(lastId) || lastId < 1) return null;
  return {
    turnId: payload.slice(0, turnEnd),
    lastId,
    events() {
      if (idEnd < 0) return null;
      let rows: unknown;
      try {
        rows = JSON.parse(payload.slice(idEnd + 1));
      } catch {
        return null;
      }
      // Gapless ids ending at lastId are what the hub relies on; anything else is read from the log instead.
      if (!Array.isArray(rows) || rows.length === 0) return null;
      const events = rows as [number, TurnEventType, unknown][];
      const gapless = events.every((row, i) => Array.isArray(row) && row[0] === lastId - events.length + 1 + i);
      return gapless ? events.map(([id, type, data]) => storedTurnEvent(id, type, data)) : null;
    },
  };
}
