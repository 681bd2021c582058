import { z } from 'zod';
import { factCheckOutcomeSchema, turnResultSchema } from './turn';
import { turnErrorBodySchema } from './errors';
import { GATE_NAMES } from './gate-names';
import { STREAM_AGENTS, type TurnEventType } from './event-catalog';
import { inputReceivedSchema, inputRequestSchema } from './interaction';

export { TERMINAL_EVENTS, TURN_EVENT_TYPES, type StreamAgent, type TurnEventType } from './event-catalog';

const streamAgent = z.enum(STREAM_AGENTS);

/**
 * The event catalog (docs/api.md, "The event catalog"), with the events this service adds:
 * `cost_warning`, `fact_check`, `step.retry`, `turn.retried`, `turn.input_required` and `turn.input_received`. `step.retry` announces that a step is
 * running again after a failed attempt; token deltas carry their `attempt` and the `step` they belong
 * to (the name `step.retry` gives it), so a client discards the partial text of exactly that step's
 * earlier attempts (docs/design.md, "Step retries").
 * `turn.retried` follows a `turn.failed` when an operator retries the failed turn: a new attempt of
 * the turn resumes at the step that failed, and ends with its own terminal event.
 */
export const eventDataSchemas = {
  'turn.started': z.object({ turn_id: z.string(), at: z.string() }),
  'agent.started': z.object({ agent: streamAgent, at: z.string(), question: z.string() }),
  'agent.thought': z.object({
    agent: streamAgent,
    delta: z.string(),
    attempt: z.number().int().min(1),
    step: z.string(),
  }),
  'agent.completed': z.object({
    agent: streamAgent,
    at: z.string(),
    duration_ms: z.number(),
    cost_usd: z.number(),
    output_summary: z.string(),
  }),
  'validator.gate': z.object({
    finding_id: z.string(),
    claim: z.string(),
    gate: z.enum(GATE_NAMES),
    verdict: z.enum(['passed', 'failed', 'skipped']),
    detail: z.record(z.string(), z.unknown()),
  }),
  'validator.critic': z.object({
    finding_id: z.string(),
    verdict: z.enum(['accept', 'downgrade', 'reject']),
    reasoning: z.string(),
    concerns: z.array(z.unknown()),
  }),
  'step.retry': z.object({ step: z.string(), attempt: z.number().int().min(2), reason: z.string(), at: z.string() }),
  cost_warning: z.object({ cost_usd: z.number(), threshold_usd: z.number(), at: z.string() }),
  /** The turn's `result.fact_check`; an event of a turn checked while the check only warned carries `issues` only. */
  fact_check: factCheckOutcomeSchema.partial({ numbers_checked: true, repairs: true }),
  'turn.completed': z.object({ turn_id: z.string(), result: turnResultSchema }),
  /** `cost_usd` (beyond the product contract): what the failed turn's model calls cost, failed attempts included. */
  'turn.failed': z.object({ turn_id: z.string(), error: turnErrorBodySchema, cost_usd: z.number() }),
  'turn.retried': z.object({
    turn_id: z.string(),
    attempt: z.number().int().min(2),
    previous_error: turnErrorBodySchema.nullable(),
    at: z.string(),
  }),
  /** A turn that may ask (`interaction` on its request) asks: it waits for POST /v1/turns/:id/input or the deadline. */
  'turn.input_required': inputRequestSchema.extend({ turn_id: z.string() }),
  /** What the turn goes on with: the answer, or the default at the deadline. */
  'turn.input_received': inputReceivedSchema.extend({ turn_id: z.string() }),
  // `satisfies` fails the build when the zod-free list and the schemas name different events.
} as const satisfies Record<TurnEventType, z.ZodType>;

export type TurnEventData<T extends TurnEventType> = z.infer<(typeof eventDataSchemas)[T]>;

/** Every field name some event of the catalog declares. */
type CatalogField = { [K in TurnEventType]: keyof TurnEventData<K> }[TurnEventType];

/**
 * An event as stored and as delivered over SSE: a union discriminated on `type`, so narrowing on it types
 * `data` as that event's schema says. The fields other events declare may be read too, as `unknown` (the
 * type claims nothing of them), so a field read without narrowing is `unknown`, not an error, while a name
 * no event declares (a misspelling) does not compile.
 */
export type TurnEvent<T extends TurnEventType = TurnEventType> = {
  [K in T]: {
    id: number;
    type: K;
    data: TurnEventData<K> & { readonly [F in Exclude<CatalogField, keyof TurnEventData<K>>]?: unknown };
  };
}[T];
