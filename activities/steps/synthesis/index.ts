/**
 * Steps 7 and 7b (docs/design.md, "Step 7: synthesis" and "The fact-check"): synthesis streams the
 * answer under the `synthesis` channel, constrained to the Fact Sheet built here from the validated
 * findings and to the coach's personal anchors, which are not findings and have a field of their own
 * (checks/personal-anchors.ts); then the deterministic fact-check binds it to both. An answer with numbers that trace to nothing
 * is written once more, the model told which numbers (a repair inside this activity, so the workflow's
 * commands stay the same and every recorded history replays); whatever is still untraced is removed
 * (checks/fact-check.ts). The repaired text replaces the first on the stream as the step's next attempt
 * (../check-answer.ts). The `fact_check` event and the returned outcome say what was found and done.
 */
import type { FactCheckOutcome, FactEntry, PersonalAnchorEntry } from '../../../contracts/turn';
import { checkNumbers, type FactCheckReferences } from '../../../checks/fact-check';
import { announceRevision, endCheckedAnswer, firstTextAttempt, resynthesisReason } from '../check-answer';
import { buildFactSheet } from '../../../checks/fact-sheet';
import { anchorReferences, personalAnchorEntries } from '../../../checks/personal-anchors';
import { withMemory } from '../memory/prompt';
import { FINAL_SYNTHESIS_SYSTEM, synthesisMessages, type SynthesisPromptInputs } from './prompt';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt } from '../../runtime/step-attempt';
import { announceAgentStarted, streamThoughts } from '../../runtime/stream-agent-reply';
import { readTurnDataCounts } from '../../../platform/health-data/snapshot';
import { ANALYSED_TABLES, asksAboutOwnLabs, lacksData, noDataReply, ownLabsNote, publishReply } from '../no-data-reply';

/** A number about the user computed deterministically for the coach (docs/design.md, "Health Coach"). */
interface SynthesisAnchor {
  key: string;
  label: string;
  value: number;
  unit: string | null;
  n: number;
  window: string;
}

export interface SynthesisInput extends Omit<SynthesisPromptInputs, 'factSheet' | 'personalAnchors' | 'repair'> {
  turnId: string;
  /** Domain Expert prose, whose reference numbers the fact-check accepts. */
  expertProse: string;
  /** The coach's personal anchors: deterministic numbers the answer may cite, beside the Fact Sheet. */
  anchors: SynthesisAnchor[];
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface SynthesisOutput {
  /** The answer as checked: no number in it fails the fact-check. */
  answer: string;
  /** Only the validated findings' numbers. */
  factSheet: FactEntry[];
  /** The coach's anchors the answer could cite: `result.personal_anchors`. Absent in histories recorded before it. */
  personalAnchors?: PersonalAnchorEntry[];
  factCheck: FactCheckOutcome;
}

/**
 * The no-data reply when the answer needed the user's rows and the turn's snapshot has none to compute from,
 * and nothing validated or anchored is left to say: Data Science was asked (for a data question, or coaching
 * on the user's data) and either every run of it failed with none of the three tables in the snapshot, or its
 * findings were about a table the snapshot has no rows of (a sleep question from a user who uploaded only
 * workouts). The reply names the empty tables and how to fill them. Null
 * otherwise: coaching or a knowledge answer that never asked for the user's numbers is written as usual.
 */
async function noDataAnswer(deps: StepDeps, input: SynthesisInput): Promise<string | null> {
  const nothingToCite = input.anchors.length === 0 && input.findings.every((f) => f.verdict === 'rejected');
  // The tables Data Science's findings were computed from: a question about sleep needs the daily summaries.
  const asked = [...new Set(input.findings.filter((f) => f.source === 'data_science').map((f) => f.table ?? 'daily'))];
  if (!nothingToCite || (!input.dataScienceFailed && asked.length === 0)) return null;
  const counts = await readTurnDataCounts(deps.pool, input.turnId);
  if (!counts) return null;
  if (input.dataScienceFailed && lacksData(counts, ANALYSED_TABLES)) return noDataReply(counts, ANALYSED_TABLES);
  // When the Domain Expert or the coach leads, their answer stands (a lab question still gets the clinical
  // context, and the note on missing labs); the reply replaces only a Data Science answer with nothing in it.
  if (input.mainAgent !== 'data_science') return null;
  return asked.length > 0 && lacksData(counts, asked) ? noDataReply(counts, asked) : null;
}

export function createSynthesise(deps: StepDeps) {
  return async function synthesise(input: SynthesisInput): Promise<SynthesisOutput> {
    const step = 'synthesis';
    const agent = 'synthesis';
    const { turnId } = input;
    const { sheet, entries } = buildFactSheet(input.findings);
    const personalAnchors = personalAnchorEntries(input.anchors);
    // An answer's number traces to a fact sheet value or to an anchor; anchors are references, not entries.
    const references: FactCheckReferences = {
      sheet: { ...sheet, ...anchorReferences(personalAnchors) },
      userMessage: input.userMessage,
      expertProse: input.expertProse,
    };
    const { userMessage, mainAgent, mainAgentDraft, supportingInsights, findings, dataScienceFailed } = input;
    const inputs: SynthesisPromptInputs = {
      userMessage,
      mainAgent,
      mainAgentDraft,
      supportingInsights,
      findings,
      dataScienceFailed,
      factSheet: entries,
      personalAnchors,
    };
    return runStepAttempt(deps.events, turnId, step, async ({ attempt: activityAttempt, signal }) => {
      const startedAt = deps.clock();
      await announceAgentStarted(deps.events, {
        turnId,
        agent,
        invocation: step,
        question: userMessage,
        at: startedAt,
      });
      let attempt = await firstTextAttempt(deps.events, turnId, step, activityAttempt);
      let costUsd = 0;
      const noData = await noDataAnswer(deps, input);
      if (noData !== null) {
        // Decided from the snapshot's counts: no model call, no number, an empty fact sheet.
        await publishReply(deps.events, turnId, { agent, step, attempt, text: noData });
        const noDataReferences: FactCheckReferences = { ...references, sheet: {} };
        const ending = await endCheckedAnswer(deps.events, turnId, {
          agent,
          step,
          answer: noData,
          references: noDataReferences,
          firstCheck: checkNumbers(noData, noDataReferences),
          resynthesised: false,
          revision: () => attempt + 1,
          completion: { startedAt, at: () => deps.clock(), costUsd },
        });
        return { answer: ending.answer, factSheet: [], personalAnchors: [], factCheck: ending.factCheck };
      }
      const write = async (callInputs: SynthesisPromptInputs) => {
        const response = await streamThoughts(deps, {
          turnId,
          modelCall: step,
          inputs: callInputs,
          attempt,
          signal,
          agent,
          request: {
            model: deps.models.main,
            system: withMemory(FINAL_SYNTHESIS_SYSTEM, input.memory),
            maxTokens: 1500,
            messages: synthesisMessages(callInputs),
          },
        });
        costUsd += response.costUsd;
        return response.text;
      };

      const first = await write(inputs);
      const firstCheck = checkNumbers(first, references);
      let answer = first;
      const resynthesised = firstCheck.untraced.length > 0;
      if (resynthesised) {
        attempt += 1;
        await announceRevision(deps.events, turnId, { step, attempt, reason: resynthesisReason(firstCheck.untraced) });
        const untraced = firstCheck.untraced.map(({ value, text }) => ({ value, text }));
        answer = await write({ ...inputs, repair: { previousAnswer: first, untraced } });
      }
      if (asksAboutOwnLabs(userMessage)) {
        // A question about their own labs when the snapshot has none (none uploaded, or left out at the user's
        // request): the answer says so, in code.
        const counts = await readTurnDataCounts(deps.pool, turnId);
        const labsNote = counts && ownLabsNote(counts);
        if (labsNote) {
          const note = `\n\n${labsNote}`;
          await publishReply(deps.events, turnId, { agent, step, attempt, text: note });
          answer += note;
        }
      }
      const ending = await endCheckedAnswer(deps.events, turnId, {
        agent,
        step,
        answer,
        references,
        firstCheck,
        resynthesised,
        revision: () => attempt + 1,
        completion: { startedAt, at: () => deps.clock(), costUsd },
      });
      return { answer: ending.answer, factSheet: entries, personalAnchors, factCheck: ending.factCheck };
    });
  };
}
