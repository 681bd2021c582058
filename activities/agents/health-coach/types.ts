import type { Finding } from '../../../contracts/findings';
import type { Message } from '../../../contracts/turn';
import type { PersonalAnchor } from './anchors';

/** A Data Science finding after the pre-validation hop (docs/design.md#step-4-the-main-agent). */
export interface CoachFinding {
  finding: Finding;
  verdict: 'validated' | 'conditional' | 'rejected';
  assessment: { mechanism: string; strategy: string | null } | null;
}

/** A finding the coach may see: the Critic and the gates did not disown it. */
export type ShownFinding = CoachFinding & { verdict: 'validated' | 'conditional' };

export const isShownFinding = (f: CoachFinding): f is ShownFinding => f.verdict !== 'rejected';

export type RecommendVerdict = 'YESREC' | 'NOREC';
export type FinishDecision = 'FINISH' | 'CONTINUE';

export interface CoachUserInput {
  turnId: string;
  userId: string;
  /** The conversation so far, the current user message last. */
  messages: Message[];
  /** The coach's (rephrased) question. */
  question: string;
  /** Pre-validated findings; rejected ones are filtered out again here, whatever the caller passed. */
  findings: CoachFinding[];
  /** Domain Expert prose or the Data Science summary; '' when none. */
  supportingInsights: string;
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface CoachUserOutput {
  /** The coaching response, with the closing summary appended when the conversation is finished. */
  reply: string;
  verdict: RecommendVerdict;
  finish: FinishDecision;
  closingSummary: string | null;
  /** The anchors the coach was given; synthesis may cite them, and the Turn's result lists them as `personal_anchors`. */
  anchors: PersonalAnchor[];
  /** Keys of the anchors whose value the reply states. */
  citedAnchors: string[];
  costUsd: number;
}
