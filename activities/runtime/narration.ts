/**
 * An agent's narration of one step on the event log (`agent.thought`), append-only across the step's attempts, as
 * the contract promises ("delta is append-only, you never get a replace or insert"): a client that concatenates
 * an agent's deltas ends with exactly the text the agent ended with, whatever failed, crashed or was retried on
 * the way (docs/streaming.md#retried-steps).
 *
 * A step's narration is a run of segments, numbered in the order its attempt makes them: one per model call it
 * streams, one per piece of text it writes itself. Every delta is keyed by the step's activity, its segment and
 * its offset in the segment (`thought:<activity>:<step>:<segment>:<offset>`), so that an attempt after a failure finds
 * what the earlier ones showed of each segment (`earlier`), and:
 * - a model call goes on from its segment's earlier text: the model is given it as the start of its reply (the
 *   Messages API's prefill), and only what it adds is written (./stream-agent-reply.ts);
 * - text the step writes itself is said once: written again, it adds only what goes beyond what was shown of it
 *   (the rest of a reply cut short), and nothing when it differs (a line naming this attempt's own timing);
 * - two writers of one offset (an attempt, and a straggler of the one before) write it once.
 *
 * Nothing of an earlier attempt is ever taken back: `step.retry` says that a step runs again, and clients add
 * what follows to what they have.
 */
import type { StreamAgent } from '../../contracts/event-data';
import type { StepId } from '../../contracts/steps';
import type { EventLog } from '../../platform/event-log';

export interface NarrationSegment {
  /** What earlier attempts of the step showed of this segment ('' on a first attempt). */
  readonly earlier: string;
  /** Appends a delta after everything this segment shows so far. */
  append(agent: StreamAgent, delta: string): Promise<void>;
}

export interface Narration {
  /** The activity's attempt: every delta names it (`agent.thought`'s `attempt`). */
  readonly attempt: number;
  /** Everything earlier attempts showed, in order: what a client has of this step already. */
  readonly shown: string;
  /** The next segment, for a model call to stream into (./stream-agent-reply.ts). */
  nextSegment(): NarrationSegment;
  /** Text the step writes itself, as the next segment: said once, across attempts (see the header). */
  write(agent: StreamAgent, text: string): Promise<void>;
}

const keyPrefix = (activity: string, step: StepId) => `thought:${activity}:${step}:`;

/** What earlier attempts wrote, by segment: each segment's deltas joined in the order they were written. */
async function earlierSegments(events: EventLog, turnId: string, prefix: string): Promise<Map<number, string>> {
  const segments = new Map<number, string>();
  for (const { key, data } of await events.readKeyed(turnId, prefix)) {
    const segment = Number(key.split(':')[0]);
    if (!Number.isInteger(segment) || typeof data.delta !== 'string') continue;
    segments.set(segment, (segments.get(segment) ?? '') + data.delta);
  }
  return segments;
}

/**
 * The narration of one attempt of a step's activity. `activity` names the scheduled activity, the same on all its
 * attempts (Temporal's activity id); the turn's attempt scopes it further (the event log's keys are per attempt).
 */
export async function openNarration(
  events: EventLog,
  scope: { turnId: string; step: StepId; activity: string; attempt: number },
): Promise<Narration> {
  const { turnId, step, activity, attempt } = scope;
  const prefix = keyPrefix(activity, step);
  const earlier = attempt > 1 ? await earlierSegments(events, turnId, prefix) : new Map<number, string>();
  let next = 0;

  function segment(index: number): NarrationSegment {
    let offset = earlier.get(index)?.length ?? 0;
    return {
      earlier: earlier.get(index) ?? '',
      async append(agent, delta) {
        if (delta === '') return;
        const at = offset;
        offset += delta.length;
        await events.append(turnId, [
          {
            type: 'agent.thought',
            data: { agent, delta, attempt, step },
            dedupeKey: `${prefix}${index}:${at}`,
          },
        ]);
      },
    };
  }

  return {
    attempt,
    shown: [...earlier.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, text]) => text)
      .join(''),
    nextSegment: () => segment(next++),
    async write(agent, text) {
      const own = segment(next++);
      if (text.startsWith(own.earlier)) await own.append(agent, text.slice(own.earlier.length));
    },
  };
}
