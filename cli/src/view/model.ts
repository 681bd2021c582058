/**
 * The live view's model: a turn's events in, what to show out. No I/O and no clock, so a recorded
 * event sequence always gives the same view.
 *
 * It has two halves, which the renderers treat differently:
 *
 * - **Finished blocks** (`apply` returns them): facts that will not change once shown, such as an agent
 *   that started or finished, a retried step, a finding with its gates and the Critic's verdict, the
 *   fact-check, the result. A renderer writes each exactly once.
 * - **The live state** (`runningAgents`, `pendingFindings`): what is still moving, the agents at work
 *   with their narration so far and the findings whose gates are still coming in. A terminal redraws
 *   it in place; plain output never shows it.
 *
 * Narration comes from the stream's transcripts (`TurnStream.text`): each agent's deltas concatenated,
 * append-only across a retried step, which goes on from what it had shown.
 *
 * Everything the service sent enters through `apply` and `narration`, where it is made terminal-safe
 * (../terminal-text.ts): no block or live state holds a control character or an escape sequence.
 */
import type { ErrorBody, FactCheckOutcome, StreamAgent, TurnResult, TurnStreamEvent } from '@amy/sdk';
import { HARD_GATES, type GateName } from '../../../contracts/findings';
import { terminalSafe, terminalText } from '../terminal-text';

type GateVerdict = 'passed' | 'failed' | 'skipped';
type CriticVerdict = 'accept' | 'downgrade' | 'reject';

/** A finding as the validator judges it: one verdict per gate that ran, then the Critic's. */
export interface FindingCheck {
  findingId: string;
  claim: string;
  gates: Partial<Record<GateName, GateVerdict>>;
  critic: CriticVerdict | null;
}

export interface RunningAgent {
  agent: StreamAgent;
  question: string;
  /** When it started by the server's clock (ms since the epoch): a view opened late still times it from the start. */
  startedAt: number;
  /** Its narration in this run so far. */
  text: string;
}

export type Block =
  | { kind: 'turn-started'; turnId: string }
  | { kind: 'agent-started'; agent: StreamAgent; question: string }
  | {
      kind: 'agent-completed';
      agent: StreamAgent;
      durationMs: number;
      costUsd: number;
      summary: string;
      text: string;
    }
  | { kind: 'step-retry'; step: string; attempt: number; reason: string }
  | { kind: 'validator-started' }
  | { kind: 'finding'; finding: FindingCheck }
  | { kind: 'fact-check'; values: number[]; repairs?: FactCheckOutcome['repairs'] }
  | { kind: 'cost-warning'; costUsd: number; thresholdUsd: number }
  | { kind: 'completed'; turnId: string; result: TurnResult; fromSnapshot: boolean }
  | { kind: 'failed'; turnId: string; error: ErrorBody; costUsd: number; fromSnapshot: boolean }
  | { kind: 'retried'; attempt: number }
  | { kind: 'notice'; text: string };

/** Each agent's narration, its deltas concatenated: a `TurnStream` is one. */
export interface Transcripts {
  text(agent: StreamAgent): string;
}

const NO_TRANSCRIPTS: Transcripts = { text: () => '' };

export class TurnView {
  private transcripts: Transcripts = NO_TRANSCRIPTS;
  /** Per running agent, where its text began in the transcript: an agent can run again later in a turn. */
  private readonly running = new Map<StreamAgent, { question: string; startedAt: number; textStart: number }>();
  private readonly checking = new Map<string, FindingCheck>();
  private validatorSeen = false;
  /** The options of each question the turn asked, for the line that says what it went on with. */
  private readonly questions = new Map<string, Array<{ id: string; label: string }>>();
  /** The outcome of the last terminal event; a `turn.retried` after it reopens the turn. */
  ended: 'completed' | 'failed' | null = null;

  /** The blocks this event finishes. `transcripts` must already include the event, as a `TurnStream` does. */
  apply(received: TurnStreamEvent, transcripts: Transcripts): Block[] {
    this.transcripts = transcripts;
    const event = terminalSafe(received);
    switch (event.type) {
      case 'turn.started':
        return [{ kind: 'turn-started', turnId: event.turn_id }];
      case 'agent.started': {
        const startedAt = Date.parse(event.at);
        this.running.set(event.agent, {
          question: event.question,
          startedAt: Number.isNaN(startedAt) ? 0 : startedAt,
          textStart: transcripts.text(event.agent).length,
        });
        return [{ kind: 'agent-started', agent: event.agent, question: event.question }];
      }
      case 'agent.completed': {
        const text = this.narration(event.agent);
        this.running.delete(event.agent);
        return [
          {
            kind: 'agent-completed',
            agent: event.agent,
            durationMs: event.duration_ms,
            costUsd: event.cost_usd,
            summary: event.output_summary,
            text,
          },
        ];
      }
      case 'step.retry':
        return [{ kind: 'step-retry', step: event.step, attempt: event.attempt, reason: event.reason }];
      case 'validator.gate': {
        const finding = this.checking.get(event.finding_id) ?? {
          findingId: event.finding_id,
          claim: event.claim,
          gates: {},
          critic: null,
        };
        finding.gates[event.gate] = event.verdict;
        this.checking.set(event.finding_id, finding);
        if (this.validatorSeen) return [];
        this.validatorSeen = true;
        return [{ kind: 'validator-started' }];
      }
      case 'validator.critic': {
        // The Critic reviews every finding whose gates ran, after them: its verdict finishes the finding.
        const finding = this.checking.get(event.finding_id);
        if (!finding) return [];
        this.checking.delete(event.finding_id);
        return [{ kind: 'finding', finding: { ...finding, critic: event.verdict } }];
      }
      case 'fact_check':
        // Events logged before the check was binding carry no repairs: their numbers stayed in the answer.
        return [{ kind: 'fact-check', values: event.issues.map((issue) => issue.value), repairs: event.repairs }];
      case 'cost_warning':
        return [{ kind: 'cost-warning', costUsd: event.cost_usd, thresholdUsd: event.threshold_usd }];
      case 'turn.completed':
        this.ended = 'completed';
        return [
          ...this.settle(),
          { kind: 'completed', turnId: event.turn_id, result: event.result, fromSnapshot: event.snapshot === true },
        ];
      case 'turn.failed':
        this.ended = 'failed';
        return [
          ...this.settle(),
          {
            kind: 'failed',
            turnId: event.turn_id,
            error: event.error,
            costUsd: event.cost_usd,
            fromSnapshot: event.snapshot === true,
          },
        ];
      case 'turn.input_required':
        this.questions.set(event.request_id, event.options);
        return [];
      case 'turn.input_received': {
        const option = this.questions.get(event.request_id)?.find((o) => o.id === event.option_id);
        const chosen = event.text !== null ? `"${event.text}"` : `"${option?.label ?? event.option_id}"`;
        const text =
          event.source === 'expiry'
            ? `No answer in time: the turn went on with the default, ${chosen}.`
            : `Answered ${chosen}: the turn goes on.`;
        return [{ kind: 'notice', text }];
      }
      case 'turn.retried':
        this.ended = null;
        return [{ kind: 'retried', attempt: event.attempt }];
      default:
        // agent.thought only moves the live state; an event type newer than this CLI is left out.
        return [];
    }
  }

  runningAgents(): RunningAgent[] {
    return [...this.running].map(([agent, run]) => ({
      agent,
      question: run.question,
      startedAt: run.startedAt,
      text: this.narration(agent),
    }));
  }

  pendingFindings(): FindingCheck[] {
    return [...this.checking.values()];
  }

  /** An agent's text since it started this time; the whole transcript if this view never saw it start. */
  private narration(agent: StreamAgent): string {
    const text = this.transcripts.text(agent);
    const start = this.running.get(agent)?.textStart ?? 0;
    // A resumed stream has a fresh transcript, shorter than where the text began in the old one.
    return terminalText(text.length >= start ? text.slice(start) : text);
  }

  /** At the end, findings the Critic never reached are shown as far as their gates got; nothing runs on. */
  private settle(): Block[] {
    const unfinished = [...this.checking.values()].map((finding): Block => ({ kind: 'finding', finding }));
    this.checking.clear();
    this.running.clear();
    return unfinished;
  }
}

/** A hard gate that failed rejects the finding whatever else happened; so does the Critic's reject. */
export function isRejected(finding: FindingCheck): boolean {
  return finding.critic === 'reject' || HARD_GATES.some((gate) => finding.gates[gate] === 'failed');
}
