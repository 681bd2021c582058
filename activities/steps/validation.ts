/**
 * Step 6, the deterministic half (seed 002, "The 7 deterministic gates"): each finding's series is cut
 * from the user's own rows, in Python, the same way the sandbox wrapper builds `summary_df` (composite
 * features included); the seven gates run on it in the warm gates process; every gate's result goes
 * out as one `validator.gate` event with its numbers in `detail`.
 */
import { log } from '@temporalio/activity';
import type { AgentFinding, GateVerdict, GatesOutcome } from '../../contracts/findings';
import type { Assessment } from './assessment';
import type { CriticVerdict } from './critic';
import { readUserHealthData } from '../../platform/health-data/store';
import type { StepDeps } from '../runtime/step-deps';
import { runStepAttempt } from '../runtime/step-attempt';

/** A finding after validation, as synthesis, the result and memory see it. */
export interface ValidatedFinding extends AgentFinding {
  verdict: GateVerdict;
  /** null when the gates could not run at all (the finding is then rejected). */
  gates: GatesOutcome | null;
  critic: CriticVerdict | null;
  /** Only for findings that were not rejected, and null when the Assessment was unavailable. */
  assessment: Assessment | null;
}

export interface RunGatesInput {
  turnId: string;
  userId: string;
  findings: AgentFinding[];
}

export function createRunGates(deps: StepDeps) {
  return async function runGates(input: RunGatesInput): Promise<GatesOutcome[]> {
    const { turnId, findings } = input;
    if (findings.length === 0) return [];
    return runStepAttempt(deps.events, turnId, 'gates', async () => {
      const { daily } = await readUserHealthData(deps.pool, input.userId);
      const built = await deps.gates.buildSeries(
        daily,
        findings.map(({ finding, windowDays, offsetDays }) => ({ finding, windowDays, offsetDays })),
      );
      for (const { series, missingColumns } of built) {
        if (missingColumns.length > 0) {
          log.warn('a finding names columns the data does not have', {
            findingId: series.finding.id,
            missingColumns,
          });
        }
      }
      const outcomes = await deps.gates.run(built.map((b) => b.series));
      const claims = new Map(findings.map(({ finding }) => [finding.id, finding.claim]));
      await deps.events.append(
        turnId,
        outcomes.flatMap((outcome) =>
          outcome.gates.map((gate) => ({
            type: 'validator.gate' as const,
            data: {
              finding_id: outcome.finding_id,
              claim: claims.get(outcome.finding_id) ?? '',
              gate: gate.gate,
              verdict: gate.verdict,
              detail: gate.detail,
            },
            dedupeKey: `validator.gate:${outcome.finding_id}:${gate.gate}`,
          })),
        ),
      );
      return outcomes;
    });
  };
}
