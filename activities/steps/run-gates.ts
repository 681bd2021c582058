/**
 * Step 6, the deterministic half (docs/design.md#the-seven-gates): each finding's series is cut
 * from the user's own rows, in Python, the same way the sandbox wrapper builds `summary_df` (composite
 * features included), `activities_df` and `labs_df`; its numbers are recomputed from that series (the `reproduction` gate,
 * docs/design.md#reproduction); the seven gates run on it in the warm gates process, every finding of the
 * step in one request, a description judged by what it estimates (gates-py/gates/descriptions.py); every
 * gate's result goes out as one `validator.gate` event with its numbers in `detail`.
 */
import { log } from '@temporalio/activity';
import type { AgentFinding, GateVerdict, GatesOutcome } from '../../contracts/findings';
import type { Assessment } from './assessment';
import type { CriticVerdict } from './critic/verdict';
import { readTurnHealthData } from '../../platform/health-data/snapshot';
import type { StepDeps } from '../runtime/step-deps';
import type { NewTurnEvent } from '../../platform/event-log';
import { runStepAttempt } from '../runtime/step-attempt';
import { seriesSpec } from '../../platform/gates';
import { reproduceFinding, reproductionGate, type Reproduction } from '../../checks/reproduction';
import { isDescription, statisticOf } from '../../contracts/statistics';

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

const DAY_MS = 86_400_000;

/** The day `offsetDays` before the rows' last day (YYYY-MM-DD); '' without rows. */
function windowEnd(daily: ReadonlyArray<{ date: string }>, offsetDays = 0): string {
  if (daily.length === 0) return '';
  const last = daily.reduce((latest, row) => (row.date > latest ? row.date : latest), daily[0].date);
  return new Date(Date.parse(`${last}T00:00:00Z`) - offsetDays * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Reproduction first (checks/reproduction.ts), then the seven gates on what it leaves them:
 * - a number that does not reproduce rejects the finding (a hard gate: the seven do not run);
 * - every other finding, description or inference, is judged by the seven, and one we cannot reproduce
 *   is at most `conditional`;
 * - a reproduced description none of the seven applies to (an exact record of the window: a count, a
 *   latest reading) is validated by its reproduction, where the contract's aggregation would call a
 *   finding no gate applied to `conditional`: its numbers were recomputed from the rows, and nothing
 *   about them is estimated.
 */
function combine(
  reproduction: Reproduction,
  description: boolean,
  findingId: string,
  seven: GatesOutcome | null,
): GatesOutcome {
  const gate = reproductionGate(reproduction);
  if (reproduction.status === 'mismatch') {
    return {
      finding_id: findingId,
      gates: [gate],
      verdict: 'rejected',
      hard_rejection: 'reproduction',
      passes: 0,
      applicable: 0,
    };
  }
  const judged = seven!;
  const reproduced = reproduction.status === 'reproduced';
  let verdict = judged.verdict;
  if (!reproduced && verdict === 'validated') verdict = 'conditional';
  if (reproduced && description && judged.applicable === 0 && judged.hard_rejection === null) verdict = 'validated';
  return { ...judged, gates: [gate, ...judged.gates], verdict };
}

export function createRunGates(deps: StepDeps) {
  return async function runGates(input: RunGatesInput): Promise<GatesOutcome[]> {
    const { turnId, findings } = input;
    if (findings.length === 0) return [];
    return runStepAttempt(deps.events, turnId, 'gates', async ({ signal }) => {
      const data = await readTurnHealthData(deps.pool, { turnId, userId: input.userId });
      // The attempt's signal: a cancelled or timed-out attempt leaves the gates' queue, or its process.
      const built = await deps.gates.buildSeries(data, findings.map(seriesSpec), { signal });
      const reproductions = findings.map((agentFinding, i) => {
        const { series, missingColumns } = built[i];
        if (missingColumns.length > 0) {
          log.warn('a finding names columns the data does not have', { findingId: series.finding.id, missingColumns });
        }
        return reproduceFinding(agentFinding, series, windowEnd(data.daily, agentFinding.offsetDays), missingColumns);
      });
      const judgedIndexes = findings.flatMap((_, i) => (reproductions[i].status === 'mismatch' ? [] : [i]));
      // One request for every finding of the step: the gates process pays its round trip once.
      const judged = await deps.gates.run(
        judgedIndexes.map((i) => ({ ...built[i].series, statistic: statisticOf(findings[i]) })),
        { signal },
      );
      const sevenOf = new Map(judgedIndexes.map((findingIndex, k) => [findingIndex, judged[k]]));
      const outcomes = findings.map((agentFinding, i) =>
        combine(reproductions[i], isDescription(agentFinding), agentFinding.finding.id, sevenOf.get(i) ?? null),
      );
      const claims = new Map(findings.map(({ finding }) => [finding.id, finding.claim]));
      await deps.events.append(
        turnId,
        outcomes.flatMap((outcome) =>
          outcome.gates.map((gate): NewTurnEvent<'validator.gate'> => ({
            type: 'validator.gate',
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
