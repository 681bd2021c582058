/**
 * Steps 7 and 7b (docs/design.md, "Step 7: synthesis" and "The fact-check"): synthesis streams the
 * answer under the `synthesis` channel, constrained to the Fact Sheet built here from the validated
 * findings and to the coach's personal anchors, which are not findings and have a field of their own
 * (checks/personal-anchors.ts), and the deterministic fact-check binds it to both as it streams: each sentence
 * goes out once its numbers trace (checks/sentence-release.ts). The first sentence that does not trace stops the
 * writing there; the model then writes on from what went out, told which numbers were wrong (a repair inside
 * this activity, so the workflow's commands stay the same and every recorded history replays), and any sentence
 * of the repair that still does not trace is left out. Nothing that went out is taken back: the channel's
 * deltas, concatenated, are the answer. The `fact_check` event and the returned outcome say what was found
 * and done.
 */
import type { FactCheckOutcome, FactCheckRemoval, FactEntry, PersonalAnchorEntry } from '../../../contracts/turn';
import { checkNumbers, type FactCheckReferences, type NumberCheck } from '../../../checks/fact-check';
import { endCheckedAnswer, factCheckOutcome, writeCheckedAnswer } from '../check-answer';
import { buildFactSheet } from '../../../checks/fact-sheet';
import { anchorReferences, personalAnchorEntries } from '../../../checks/personal-anchors';
import { withMemory } from '../../runtime/memory-injection';
import { FINAL_SYNTHESIS_SYSTEM, synthesisMessages, type SynthesisPromptInputs } from './prompt';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt } from '../../runtime/step-attempt';
import { announceAgentStarted } from '../../runtime/stream-agent-reply';
import { readTurnDataCounts } from '../../../platform/health-data/snapshot';
import { ANALYSED_TABLES, asksAboutOwnLabs, lacksData, noDataReply, ownLabsNote } from '../../runtime/no-data-reply';

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
      // The reply to a clarification is the user's words too (or, at the deadline, the reading the answer names).
      userMessage: input.clarification ? `${input.userMessage}\n${input.clarification.answer}` : input.userMessage,
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
      ...(input.clarification ? { clarification: input.clarification } : {}),
    };
    return runStepAttempt(deps.events, turnId, step, async (attempt) => {
      const { narration } = attempt;
      const startedAt = deps.clock();
      await announceAgentStarted(deps.events, {
        turnId,
        agent,
        invocation: step,
        question: userMessage,
        at: startedAt,
      });
      const noData = await noDataAnswer(deps, input);
      if (noData !== null) {
        // Decided from the snapshot's counts: no model call, no number, an empty fact sheet.
        await narration.write(agent, noData);
        const factCheck = factCheckOutcome(checkNumbers(noData, { ...references, sheet: {} }), {
          resynthesised: false,
          removed: [],
        });
        await endCheckedAnswer(deps.events, turnId, {
          agent,
          step,
          answer: noData,
          factCheck,
          completion: { startedAt, at: () => deps.clock(), costUsd: 0 },
        });
        return { answer: noData, factSheet: [], personalAnchors: [], factCheck };
      }
      // The first writing and its repair stream into segments of their own, opened now so that an attempt after a
      // failure finds both: a repair under way means the first writing had stopped, and is not written again.
      const firstSegment = narration.nextSegment();
      const repairSegment = narration.nextSegment();
      const request = (callInputs: SynthesisPromptInputs) => ({
        model: deps.models.main,
        system: withMemory(FINAL_SYNTHESIS_SYSTEM, input.memory),
        maxTokens: 1500,
        messages: synthesisMessages(callInputs),
      });
      const writing = { turnId, agent, modelCall: step, references } as const;
      let costUsd = 0;
      let answer = firstSegment.earlier;
      let first = { checked: [] as NumberCheck['checked'], untraced: [] as NumberCheck['untraced'] };
      let stoppedAt: { sentence: string; untraced: NumberCheck['untraced'] } | null = null;
      if (repairSegment.earlier === '') {
        const { release, response } = await writeCheckedAnswer(deps, attempt, {
          ...writing,
          inputs,
          request: request(inputs),
          segment: firstSegment,
          onUntraced: 'stop',
        });
        costUsd += response.costUsd;
        answer = release.released;
        stoppedAt = release.stopped;
        first = release;
      }
      const resynthesised = stoppedAt !== null || repairSegment.earlier !== '';
      let removed: FactCheckRemoval[] = [];
      if (resynthesised) {
        // The model writes on from what went out, told which numbers of the sentence it stopped at were wrong.
        const untraced = (stoppedAt?.untraced ?? []).map(({ value, text }) => ({ value, text }));
        const repairInputs = { ...inputs, repair: { previousAnswer: answer + (stoppedAt?.sentence ?? ''), untraced } };
        const { release, response } = await writeCheckedAnswer(deps, attempt, {
          ...writing,
          inputs: repairInputs,
          request: request(repairInputs),
          segment: repairSegment,
          continues: answer,
          onUntraced: 'drop',
        });
        costUsd += response.costUsd;
        answer = release.released;
        removed = release.removed;
      }
      if (asksAboutOwnLabs(userMessage)) {
        // A question about their own labs when the snapshot has none (none uploaded, or left out at the user's
        // request): the answer says so, in code.
        const counts = await readTurnDataCounts(deps.pool, turnId);
        const labsNote = counts && ownLabsNote(counts);
        if (labsNote) {
          const note = `\n\n${labsNote}`;
          await narration.write(agent, note);
          answer += note;
        }
      }
      const factCheck = factCheckOutcome(first, { resynthesised, removed });
      await endCheckedAnswer(deps.events, turnId, {
        agent,
        step,
        answer,
        factCheck,
        completion: { startedAt, at: () => deps.clock(), costUsd },
      });
      return { answer, factSheet: entries, personalAnchors, factCheck };
    });
  };
}
