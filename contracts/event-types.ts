/**
 * The names of the event catalog, kept free of zod (like ./docs-url.ts) so that the client SDK can
 * know them at run time without bundling a schema library. `./events.ts` checks at compile time that
 * this list and its schemas name the same events.
 */
export const TURN_EVENT_TYPES = [
  'turn.started',
  'agent.started',
  'agent.thought',
  'agent.completed',
  'validator.gate',
  'validator.critic',
  'step.retry',
  'cost_warning',
  'fact_check',
  'turn.completed',
  'turn.failed',
  'turn.retried',
] as const;
export type TurnEventType = (typeof TURN_EVENT_TYPES)[number];

/** A turn's stream ends with one of these (a retried turn's log goes on after `turn.failed` with `turn.retried`). */
export const TERMINAL_EVENTS: readonly TurnEventType[] = ['turn.completed', 'turn.failed'];
