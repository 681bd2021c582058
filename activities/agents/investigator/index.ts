/**
 * The Hypothesis Investigator (docs/design.md#step-1a-the-investigator,
 * docs/design.md#hypothesis-investigator): for a question with no anchor at all, the turn skips routing and
 * this agent looks at the user's data itself. Three activities, which the workflow sequences around the
 * ordinary validation phase:
 *
 * 1. `proposeHypotheses`: the digest of the user's rows, and the model's hypotheses about them — minus
 *    any the user's memory says were already tested;
 * 2. `testHypotheses`: the top K become findings whose numbers are computed here, deterministically;
 * 3. (validation: gates, Critic, Assessment, as for any finding)
 * 4. `writeBriefing`: the model's briefing, streamed as the agent's thoughts, followed by the verdicts
 *    and effect sizes of what survived. The briefing is the turn's answer; there is no synthesis.
 *
 * The agent is narrated once per turn under `investigator` (invocation `main`): started in step 1,
 * completed in step 4 with the cost of both model calls.
 */
import { log } from '@temporalio/activity';
import { withMemory } from '../../runtime/memory-injection';
import type { AgentFinding } from '../../../contracts/findings';
import { completeStep } from '../../runtime/complete-step';
import {
  briefingUserPrompt,
  hypothesesUserPrompt,
  INVESTIGATOR_BRIEFING,
  INVESTIGATOR_SYSTEM,
  type BriefingPromptInputs,
  type HypothesesPromptInputs,
} from './prompt';
import { readTurnDataCounts, readTurnHealthData } from '../../../platform/health-data/snapshot';
import { INVESTIGATED_TABLES, lacksData, noDataReply } from '../../runtime/no-data-reply';
import { factCheckOutcome, writeCheckedAnswer } from '../../steps/check-answer';
import { buildFactSheet } from '../../../checks/fact-sheet';
import { SentenceRelease } from '../../../checks/sentence-release';
import type { FactCheckOutcome } from '../../../contracts/turn';
import { parseModelJson } from '../../../platform/llm';
import type { StepDeps } from '../../runtime/step-deps';
import { runStepAttempt } from '../../runtime/step-attempt';
import { announceAgentCompleted, announceAgentStarted } from '../../runtime/stream-agent-reply';
import type { ValidatedFinding } from '../../steps/run-gates';
import { verdictsAfter } from './briefing';
import { computeDigest, renderDigest } from './digest';
import { hypothesisToFinding } from './findings';
import { hypothesisKey, proposalsSchema, readProposals, topHypotheses, type Hypothesis } from './hypotheses';
import { readTestedHypotheses, testedKeys } from './tested-hypotheses';

export type { Hypothesis } from './hypotheses';
export { readProposals, topHypotheses } from './hypotheses';
export { augmentBriefingWithVerdicts } from './briefing';
export { computeDigest, renderDigest } from './digest';
export { hypothesisToFinding } from './findings';
export { averageRanks, spearman } from '../../../checks/statistics';

const AGENT = 'investigator' as const;

/** The Investigator runs once per turn, as its whole answer. */
const INVOCATION = 'main';

export interface ProposeHypothesesInput {
  turnId: string;
  userId: string;
  question: string;
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
  /** `context.include_memory`: false, and no remembered tested hypothesis is read either. Absent: true. */
  includeMemory?: boolean;
  /** `context.include_biomarkers`: false, and none remembered about a lab biomarker is read. Absent: true. */
  includeBiomarkers?: boolean;
}

export interface ProposeHypothesesOutput {
  digest: string;
  /** In the model's order, already-tested and unusable proposals removed. */
  hypotheses: Hypothesis[];
  costUsd: number;
  /** When the agent started, for its `agent.completed` duration. */
  startedAt: string;
}

export interface TestHypothesesInput {
  turnId: string;
  userId: string;
  hypotheses: Hypothesis[];
}

export interface WriteBriefingInput {
  turnId: string;
  question: string;
  digest: string;
  hypotheses: Hypothesis[];
  /** The tested findings after validation, rejected ones included (they are left out of the briefing). */
  validated: ValidatedFinding[];
  startedAt: string;
  /** The agent's model spend so far (the hypotheses call). */
  costUsd: number;
  /** The user's memory summary for this turn ('' when none or `include_memory` is false). */
  memory?: string;
}

export interface WriteBriefingOutput {
  /** The briefing as checked: every number in it traces to the Fact Sheet. */
  briefing: string;
  costUsd: number;
  /** What the check found and did as the briefing streamed; `checkAnswer` records it. */
  factCheck: FactCheckOutcome;
}

const NOTHING_CHECKED = { checked: [], untraced: [] };
const NO_REPAIRS = { resynthesised: false, removed: [] };

export function createInvestigatorActivities(deps: StepDeps) {
  async function proposeHypotheses(input: ProposeHypothesesInput): Promise<ProposeHypothesesOutput> {
    const { turnId, userId, question } = input;
    const startedAt = deps.clock();
    await announceAgentStarted(deps.events, { turnId, agent: AGENT, invocation: INVOCATION, question, at: startedAt });
    const [{ daily, workouts }, tested] = await Promise.all([
      readTurnHealthData(deps.pool, { turnId, userId }),
      input.includeMemory === false
        ? []
        : readTestedHypotheses(deps.pool, userId, { withoutLabs: input.includeBiomarkers === false }),
    ]);
    const inputs: HypothesesPromptInputs = { question, digest: computeDigest(daily, workouts), tested };
    const digest = renderDigest(inputs.digest);
    if (daily.length === 0) {
      // Nothing to hypothesise about: no model call, and the briefing is the no-data reply.
      return { digest, hypotheses: [], costUsd: 0, startedAt: startedAt.toISOString() };
    }
    const response = await completeStep(deps, {
      turnId,
      step: 'investigator_hypotheses',
      inputs,
      model: deps.models.main,
      system: INVESTIGATOR_SYSTEM,
      memory: input.memory,
      prompt: hypothesesUserPrompt(inputs),
      maxTokens: 2500,
    });
    const proposals = parseModelJson(response.text, proposalsSchema, response.requestId);
    const { hypotheses, dropped } = readProposals(proposals, testedKeys(tested));
    const alreadyTested = dropped.filter((d) => d.reason === 'already_tested');
    if (alreadyTested.length > 0) {
      log.warn('proposed hypotheses that memory says were already tested were dropped', {
        turnId,
        dropped: alreadyTested.map((d) => d.detail),
      });
    }
    const unusable = dropped.filter((d) => d.reason !== 'already_tested');
    if (unusable.length > 0) {
      // Index and reason only: a malformed proposal's detail can quote what the model wrote.
      const reasons = unusable.map(({ index, reason }) => ({ index, reason }));
      log.warn('unusable proposed hypotheses were dropped', { turnId, dropped: reasons });
    }
    return { digest, hypotheses, costUsd: response.costUsd, startedAt: startedAt.toISOString() };
  }

  async function testHypotheses(input: TestHypothesesInput): Promise<{ findings: AgentFinding[] }> {
    const top = topHypotheses(input.hypotheses);
    if (top.length === 0) return { findings: [] };
    const { daily } = await readTurnHealthData(deps.pool, { turnId: input.turnId, userId: input.userId });
    const findings: AgentFinding[] = [];
    for (const hypothesis of top) {
      const tested = hypothesisToFinding(hypothesis, daily);
      if (tested.ok) findings.push(tested.finding);
      else {
        log.warn('a hypothesis could not be tested on the data', {
          turnId: input.turnId,
          hypothesis: hypothesisKey({
            kind: hypothesis.kind,
            feature: hypothesis.feature_to_test,
            target: hypothesis.target_to_test,
          }),
          reason: tested.reason,
          n: tested.n,
        });
      }
    }
    return { findings };
  }

  /**
   * The briefing: the model's text, checked sentence by sentence as it streams (a sentence with a number that
   * traces to nothing is left out before anyone sees it: there is no second writing), then the verdicts of what
   * was tested, checked the same way. The agent's deltas, concatenated, are the briefing; `checkAnswer` records
   * the outcome.
   */
  async function writeBriefing(input: WriteBriefingInput): Promise<WriteBriefingOutput> {
    const { turnId } = input;
    const step = 'investigator_briefing';
    const counts = await readTurnDataCounts(deps.pool, turnId);
    if (counts && lacksData(counts, INVESTIGATED_TABLES) && input.validated.length === 0) {
      // Decided from the snapshot's counts: the reply says what to upload, with no model call and no number.
      const briefing = noDataReply(counts, INVESTIGATED_TABLES);
      await runStepAttempt(deps.events, turnId, step, ({ narration }) => narration.write(AGENT, briefing));
      await announceAgentCompleted(deps.events, {
        turnId,
        agent: AGENT,
        invocation: INVOCATION,
        startedAt: new Date(input.startedAt),
        at: deps.clock(),
        costUsd: input.costUsd,
        output: briefing,
      });
      return { briefing, costUsd: input.costUsd, factCheck: factCheckOutcome(NOTHING_CHECKED, NO_REPAIRS) };
    }
    const inputs: BriefingPromptInputs = {
      question: input.question,
      digest: input.digest,
      hypotheses: input.hypotheses.map((h) => ({
        title: h.title,
        rationale: h.rationale,
        findingId: hypothesisKey({ kind: h.kind, feature: h.feature_to_test, target: h.target_to_test }),
      })),
      validated: input.validated.map(({ finding, verdict }) => ({ finding, verdict })),
    };
    const { sheet } = buildFactSheet(
      input.validated.map(({ finding, verdict, source }) => ({ finding, verdict, source })),
    );
    const references = { sheet, userMessage: input.question };
    const { briefing, costUsd, checked } = await runStepAttempt(deps.events, turnId, step, async (attempt) => {
      const { release, response } = await writeCheckedAnswer(deps, attempt, {
        turnId,
        agent: AGENT,
        modelCall: step,
        inputs,
        references,
        segment: attempt.narration.nextSegment(),
        onUntraced: 'drop',
        request: {
          model: deps.models.main,
          system: withMemory(INVESTIGATOR_BRIEFING, input.memory),
          maxTokens: 1200,
          messages: [{ role: 'user', content: briefingUserPrompt(inputs) }],
        },
      });
      // The verdicts follow, through the same check: their numbers are the findings', which the Fact Sheet holds.
      const verdicts = new SentenceRelease(references, { released: release.released, onUntraced: 'drop' });
      const note = verdicts.push(verdictsAfter(release.released, input.validated)) + verdicts.end();
      await attempt.narration.write(AGENT, note);
      return { briefing: verdicts.released, costUsd: response.costUsd, checked: [release, verdicts] };
    });
    const removed = checked.flatMap((c) => c.removed);
    const factCheck = factCheckOutcome(
      { checked: checked.flatMap((c) => c.checked), untraced: checked.flatMap((c) => c.untraced) },
      { resynthesised: false, removed },
    );
    const total = input.costUsd + costUsd;
    await announceAgentCompleted(deps.events, {
      turnId,
      agent: AGENT,
      invocation: INVOCATION,
      startedAt: new Date(input.startedAt),
      at: deps.clock(),
      costUsd: total,
      output: briefing,
    });
    return { briefing, costUsd: total, factCheck };
  }

  return { proposeHypotheses, testHypotheses, writeBriefing };
}
