/**
 * Each agent's narration rebuilt from `agent.thought` deltas, without the text of failed attempts.
 *
 * A retried step runs again from the start, so the deltas its failed attempt streamed are void
 * (`step.retry` announces the new attempt; every delta carries its `step` and `attempt`). An agent's
 * text is a run of segments, one per step it streamed in; a segment keeps only its newest attempt's
 * deltas. The same step name streaming again later (a reflection follow-up) opens a new segment.
 */
import type { TurnStreamEvent } from '../events';

interface Segment {
  step: string;
  attempt: number;
  text: string;
}

export class AgentTranscripts {
  private readonly segments = new Map<string, Segment[]>();

  record(event: TurnStreamEvent): void {
    if (event.type === 'agent.thought') this.thought(event.agent, event.step ?? '', event.attempt, event.delta);
    else if (event.type === 'step.retry') this.retry(event.step, event.attempt);
  }

  /** The agent's text so far. */
  text(agent: string): string {
    return (this.segments.get(agent) ?? []).map((s) => s.text).join('');
  }

  private thought(agent: string, step: string, attempt: number, delta: string) {
    let segments = this.segments.get(agent);
    if (!segments) this.segments.set(agent, (segments = []));
    const current = segments[segments.length - 1];
    // An agent's steps run one after another, so a step other than the last one's is a new segment.
    if (current?.step !== step) segments.push({ step, attempt, text: delta });
    else if (attempt > current.attempt) Object.assign(current, { attempt, text: delta });
    else if (attempt === current.attempt) current.text += delta;
  }

  /** Only the step an agent is streaming in now can be the one retried: earlier segments are finished work. */
  private retry(step: string, attempt: number) {
    for (const segments of this.segments.values()) {
      const current = segments[segments.length - 1];
      if (current?.step === step && current.attempt < attempt) Object.assign(current, { attempt, text: '' });
    }
  }
}
