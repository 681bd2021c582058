/**
 * Step 8, memory (seed 002 "validatedToMemories", seed 004): one `tested_hypothesis` entry per
 * validated finding, deterministic, no model call, so the next turns know what was already tested and
 * how it came out. Narrated as the `memory` agent.
 */
import type { GateVerdict } from '../contracts/findings';
import { recordTestedHypotheses, type TestedHypothesisEntry } from './services/memory';
import type { StepDeps } from './step-deps';
import { announceAgentCompleted, announceAgentStarted } from './stream-agent-reply';
import type { ValidatedFinding } from './validation';

const CONFIDENCE: Record<GateVerdict, number> = { validated: 0.9, conditional: 0.6, rejected: 0.4 };
const EFFECT_KEYS = ['effect', 'rho', 'change', 'correlation'];

function effectOf(numbers: ValidatedFinding['finding']['numbers']): number | null {
  for (const key of EFFECT_KEYS) {
    const value = numbers[key];
    if (typeof value === 'number') return value;
  }
  return null;
}

export function testedHypothesis({ finding, verdict }: ValidatedFinding): TestedHypothesisEntry {
  return {
    text: finding.claim,
    confidence: CONFIDENCE[verdict],
    meta: {
      finding_id: finding.id,
      feature: finding.feature,
      target: finding.target,
      verdict,
      effect: effectOf(finding.numbers),
    },
  };
}

export interface RememberTurnInput {
  turnId: string;
  userId: string;
  validated: ValidatedFinding[];
}

export function createRememberTurn(deps: StepDeps) {
  return async function rememberTurn(input: RememberTurnInput): Promise<{ added: number }> {
    const { turnId } = input;
    const startedAt = deps.clock();
    await announceAgentStarted(deps.events, {
      turnId,
      agent: 'memory',
      invocation: 'memory',
      question: 'What from this turn is worth remembering?',
      at: startedAt,
    });
    const added = await recordTestedHypotheses(deps.db, {
      userId: input.userId,
      turnId,
      entries: input.validated.map(testedHypothesis),
    });
    await announceAgentCompleted(deps.events, {
      turnId,
      agent: 'memory',
      invocation: 'memory',
      startedAt,
      at: deps.clock(),
      costUsd: 0,
      output: `+${added} ${added === 1 ? 'entry' : 'entries'}${added > 0 ? ` (${added} tested_hypothesis)` : ''}`,
    });
    return { added };
  };
}
