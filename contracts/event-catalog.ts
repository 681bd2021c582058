/**
 * The names of the event catalog and of the agents on the stream, kept free of zod (like
 * ./docs-url.ts) so that the client SDK can know them at run time without bundling a schema library.
 * `./event-data.ts` checks at compile time that this list and its schemas name the same events.
 */
import { AGENT_LABELS, AGENTS, type AgentName } from './steps';

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
  'turn.input_required',
  'turn.input_received',
] as const;
export type TurnEventType = (typeof TURN_EVENT_TYPES)[number];

/** A turn's stream ends with one of these (a retried turn's log goes on after `turn.failed` with `turn.retried`). */
export const TERMINAL_EVENTS: readonly TurnEventType[] = ['turn.completed', 'turn.failed'];

/** Agents as they appear on the event stream: the four specialists plus the synthesis and memory channels. */
export const STREAM_AGENTS = [...AGENTS, 'synthesis', 'memory'] as const;
export type StreamAgent = (typeof STREAM_AGENTS)[number];

/**
 * What a screen calls each agent of the stream (the console's agent panels): a specialist by its name
 * in prose without the trailing "Agent" ("Data Science"), the two channels by their own.
 */
export const STREAM_AGENT_LABELS = {
  ...(Object.fromEntries(AGENTS.map((agent) => [agent, AGENT_LABELS[agent].replace(/ Agent$/, '')])) as Record<
    AgentName,
    string
  >),
  synthesis: 'Synthesis',
  memory: 'Memory',
} satisfies Record<StreamAgent, string>;
