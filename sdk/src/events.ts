/**
 * The typed events `amy.turns.stream()` yields: `{ id, type, ...fields }`, a union discriminated
 * on `type` with one member per event of the catalog (docs/api.md, "The event catalog", and the
 * events this service adds), as the API's own contracts define them. An event this SDK version does
 * not know is yielded as `{ id, type: 'unknown', event, data }` rather than thrown, so a client built
 * against an earlier catalog keeps working against a server that sends more.
 */
import type { TurnEventData, TurnEventType } from '../../contracts/event-data';

export type { TurnEventType };

/** A terminal event built from the stored Turn (the replay window had passed) carries `snapshot: true`. */
interface FromSnapshot {
  snapshot?: true;
}

export type KnownTurnEvent = {
  [K in TurnEventType]: { id: number; type: K } & TurnEventData<K> &
    (K extends 'turn.completed' | 'turn.failed' ? FromSnapshot : unknown);
}[TurnEventType];

export interface UnknownTurnEvent {
  id: number;
  type: 'unknown';
  /** The event name as the server sent it. */
  event: string;
  data: unknown;
}

export type TurnStreamEvent = KnownTurnEvent | UnknownTurnEvent;

export type TurnEventOf<T extends TurnEventType> = Extract<KnownTurnEvent, { type: T }>;
export type TurnCompletedEvent = TurnEventOf<'turn.completed'>;
export type TurnFailedEvent = TurnEventOf<'turn.failed'>;
/** The turn asks and waits (a request sent with `interaction`): answer with `amy.turns.respond`. */
export type TurnInputRequiredEvent = TurnEventOf<'turn.input_required'>;
/** What the turn went on with: the user's answer, or at the deadline its default (`source: 'expiry'`). */
export type TurnInputReceivedEvent = TurnEventOf<'turn.input_received'>;
