/**
 * Each agent's narration rebuilt from `agent.thought` deltas: their concatenation, in order.
 *
 * A delta is append-only, as the contract says: a step that runs again (`step.retry`, a retried activity or a
 * worker that died) goes on from what its earlier attempt showed, and an answer goes out sentence by sentence as
 * the fact-check traces it, so nothing shown is ever replaced. The synthesis channel's text is the answer.
 */
import type { TurnStreamEvent } from '../events';

export class AgentTranscripts {
  private readonly texts = new Map<string, string>();

  record(event: TurnStreamEvent): void {
    if (event.type !== 'agent.thought') return;
    this.texts.set(event.agent, (this.texts.get(event.agent) ?? '') + event.delta);
  }

  /** The agent's text so far. */
  text(agent: string): string {
    return this.texts.get(agent) ?? '';
  }
}
