/**
 * Step 7b as the steps that write an answer run it (synthesis, the fallback reply, the Investigator's
 * briefing): the check's outcome on the event log, and a repaired answer that replaces the streamed one.
 *
 * A repair reaches clients the way a retried step does. Each version of a step's streamed text has its
 * own `attempt` number on its `agent.thought` deltas, and a new version is announced by `step.retry`
 * (`reason` starts "fact-check:"), so a client that already drops a failed attempt's deltas shows the
 * repaired text instead of the first (the SDK's `stream.text()`, the CLI and the console do):
 *
 * - synthesis written once more streams as the step's next attempt;
 * - an answer with sentences removed is published as one delta holding the whole checked answer, as
 *   the attempt after that.
 *
 * Version numbers only go up within a turn's attempt, across the activity's own retries too: a step
 * retried by Temporal after a repair continues above the repair's number (`firstTextAttempt`). The
 * model call of a repair is recorded in `llm_calls` under the same number, so the ledger and the stream
 * name the same attempt.
 *
 * Every answer ends the same way (`endCheckedAnswer`): what is untraced removed, the checked answer
 * published when that changed it, the `fact_check` event, then, for a step that announced its agent's
 * start, the agent's `agent.completed`.
 */
import type { StreamAgent } from '../../contracts/events';
import type { StepId } from '../../contracts/steps';
import type { FactCheckOutcome, FactCheckRemoval, FactEntry } from '../../contracts/turn';
import type { EventLog } from '../../platform/event-log';
import {
  checkNumbers,
  describeNumbers,
  removeUntraced,
  toIssue,
  UNVERIFIED_ANSWER,
  type FactCheckReferences,
  type NumberCheck,
} from '../../checks/fact-check';
import { buildFactSheet, type FactSheetFinding } from '../../checks/fact-sheet';
import type { NumberToken } from '../../checks/numbers';
import type { StepDeps } from '../runtime/step-deps';
import { announceAgentCompleted } from '../runtime/stream-agent-reply';

const PAGE = 1000;

/** The highest `attempt` of `step`'s text deltas in the turn's current attempt (0 when it streamed none). */
async function lastStreamedAttempt(events: EventLog, turnId: string, step: StepId): Promise<number> {
  let last = 0;
  let after = 0;
  for (;;) {
    const page = await events.readAfter(turnId, after, PAGE);
    for (const event of page) {
      // An operator's retry of the turn starts its versions over, as the activities' attempts do.
      if (event.type === 'turn.retried') last = 0;
      else if (event.type === 'agent.thought' && event.data.step === step) {
        last = Math.max(last, Number(event.data.attempt) || 0);
      }
    }
    if (page.length < PAGE) return last;
    after = page[page.length - 1].id;
  }
}

/**
 * The attempt number of the first text a step's activity attempt streams: the activity's attempt, or,
 * when an earlier attempt already streamed a repaired version with that number or higher, the next one.
 */
export async function firstTextAttempt(
  events: EventLog,
  turnId: string,
  step: StepId,
  activityAttempt: number,
): Promise<number> {
  if (activityAttempt === 1) return 1;
  return Math.max(activityAttempt, (await lastStreamedAttempt(events, turnId, step)) + 1);
}

/** The version after the last one `step` streamed, for a step whose text was written by another activity. */
async function nextTextAttempt(events: EventLog, turnId: string, step: StepId): Promise<number> {
  return Math.max(2, (await lastStreamedAttempt(events, turnId, step)) + 1);
}

const them = (tokens: NumberToken[]) => (new Set(tokens.map((t) => t.value)).size === 1 ? 'it' : 'them');

export const resynthesisReason = (untraced: NumberToken[]) =>
  `fact-check: ${describeNumbers(untraced)} not in the Fact Sheet; writing the answer again without ${them(untraced)}`;

function removalReason(removed: FactCheckRemoval[], answer: string): string {
  const values = [...new Set(removed.map((r) => String(r.value)))].join(', ');
  if (removed.length === 0) return 'fact-check: the answer was empty';
  if (answer === UNVERIFIED_ANSWER) return `fact-check: ${values} not traced; nothing of the answer could be verified`;
  if (removed.every((r) => r.action === 'hedged_number'))
    return `fact-check: ${values} not traced; replaced by a hedge`;
  const sentences = new Set(removed.map((r) => r.sentence)).size;
  const pronoun = new Set(removed.map((r) => r.value)).size === 1 ? 'it' : 'them';
  return `fact-check: ${values} not traced; the sentence${sentences === 1 ? '' : 's'} holding ${pronoun} removed`;
}

/** Announces the next version of `step`'s text, whose deltas follow with `attempt`. */
export async function announceRevision(
  events: EventLog,
  turnId: string,
  revision: { step: StepId; attempt: number; reason: string },
): Promise<void> {
  const { step, attempt, reason } = revision;
  await events.append(turnId, [
    {
      type: 'step.retry',
      data: { step, attempt, reason, at: new Date().toISOString() },
      dedupeKey: `fact_check.resynthesis:${step}:${attempt}`,
    },
  ]);
}

/**
 * The checked answer as the next version of `step`'s text: `step.retry` and one delta with the whole
 * answer, in one append. `once` keys them by the step alone, for a check that runs in an activity of its
 * own (a retry of it finds them written and writes nothing).
 */
async function publishCheckedAnswer(
  events: EventLog,
  turnId: string,
  revision: { agent: StreamAgent; step: StepId; attempt: number; answer: string; removed: FactCheckRemoval[] },
  options: { once?: boolean } = {},
): Promise<void> {
  const { agent, step, attempt, answer } = revision;
  const key = options.once ? `fact_check.removal:${step}` : `fact_check.removal:${step}:${attempt}`;
  await events.append(turnId, [
    {
      type: 'step.retry',
      data: { step, attempt, reason: removalReason(revision.removed, answer), at: new Date().toISOString() },
      dedupeKey: key,
    },
    { type: 'agent.thought', data: { agent, delta: answer, attempt, step }, dedupeKey: `${key}:text` },
  ]);
}

function factCheckOutcome(
  first: NumberCheck,
  repairs: { resynthesised: boolean; removed: FactCheckRemoval[] },
): FactCheckOutcome {
  return { numbers_checked: first.checked.length, issues: first.untraced.map(toIssue), repairs };
}

/** Step 7b's event: the outcome the Turn's `result.fact_check` holds, once per turn. */
async function recordFactCheck(events: EventLog, turnId: string, outcome: FactCheckOutcome): Promise<void> {
  await events.append(turnId, [{ type: 'fact_check', data: outcome, dedupeKey: 'fact_check' }]);
}

/** How a step's answer ends: `endCheckedAnswer`'s input. */
interface AnswerEnding {
  agent: StreamAgent;
  step: StepId;
  /** The answer as it stands after the step's own repair, if any. */
  answer: string;
  references: FactCheckReferences;
  /** The check of the answer as first written: the outcome's `numbers_checked` and `issues`. */
  firstCheck: NumberCheck;
  /** Whether the step wrote the answer once more. */
  resynthesised: boolean;
  /** The version number of the checked answer; asked only when the check removes something. */
  revision: () => number | Promise<number>;
  /** Keys the published answer by the step alone (see `publishCheckedAnswer`). */
  once?: boolean;
  /**
   * For a step that announced its agent's start: the agent's `agent.completed`, announced last with
   * the checked answer as its output. `at` is read when the completion is written.
   */
  completion?: { startedAt: Date; at: () => Date; costUsd: number };
}

/**
 * The end of step 7b for an answer: whatever is still untraced removed; the checked answer, when that
 * changed it, published as the step's next version; the `fact_check` event; then the agent's
 * completion. Returns the checked answer and the outcome the `fact_check` event holds.
 */
export async function endCheckedAnswer(
  events: EventLog,
  turnId: string,
  ending: AnswerEnding,
): Promise<{ answer: string; factCheck: FactCheckOutcome }> {
  const { agent, step, answer } = ending;
  const checked = removeUntraced(answer, ending.references);
  if (checked.answer !== answer) {
    const attempt = await ending.revision();
    await publishCheckedAnswer(events, turnId, { agent, step, attempt, ...checked }, { once: ending.once });
  }
  const factCheck = factCheckOutcome(ending.firstCheck, {
    resynthesised: ending.resynthesised,
    removed: checked.removed,
  });
  await recordFactCheck(events, turnId, factCheck);
  if (ending.completion) {
    const { startedAt, at, costUsd } = ending.completion;
    await announceAgentCompleted(events, {
      turnId,
      agent,
      invocation: step,
      startedAt,
      at: at(),
      costUsd,
      output: checked.answer,
    });
  }
  return { answer: checked.answer, factCheck };
}

export interface CheckAnswerInput {
  turnId: string;
  answer: string;
  userMessage: string;
  findings: FactSheetFinding[];
}

export interface CheckAnswerOutput {
  /** The briefing as checked: no number in it fails the fact-check. */
  answer: string;
  factSheet: FactEntry[];
  factCheck: FactCheckOutcome;
}

/**
 * Step 7b as an activity of its own, for an answer that synthesis did not write (the Investigator's
 * briefing): its Fact Sheet, built by the same rules, the same deterministic fact-check and the same
 * removal (no second writing: the briefing's own step has ended). A briefing with numbers removed
 * replaces the streamed one as the briefing step's next version, keyed by the step alone, so a retry
 * of this activity writes it once.
 */
export function createCheckAnswer(deps: StepDeps) {
  return async function checkAnswer(input: CheckAnswerInput): Promise<CheckAnswerOutput> {
    const { turnId } = input;
    const step = 'investigator_briefing';
    const { sheet, entries } = buildFactSheet(input.findings);
    const references: FactCheckReferences = { sheet, userMessage: input.userMessage };
    const { answer, factCheck } = await endCheckedAnswer(deps.events, turnId, {
      agent: 'investigator',
      step,
      answer: input.answer,
      references,
      firstCheck: checkNumbers(input.answer, references),
      resynthesised: false,
      revision: () => nextTextAttempt(deps.events, turnId, step),
      once: true,
    });
    return { answer, factSheet: entries, factCheck };
  };
}
