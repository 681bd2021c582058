/**
 * Step 8, memory (docs/design.md#step-8-memory, docs/design.md#extraction): two writes, both best-effort for the turn.
 * - The LLM extractor's goal / insight / preference / history entries from the exchange.
 * - One `tested_hypothesis` entry per processed finding, and an `insight` entry per validated inference,
 *   deterministic, no model call, so the next turns know what was already tested and how it came out.
 * Narrated as the `memory` agent: `+3 entries (1 insight, 1 goal, 1 history)`.
 */
import { log } from '@temporalio/activity';
import { z } from 'zod';
import type { GateVerdict } from '../../../contracts/findings';
import { MEMORY_CATEGORIES } from '../../../contracts/memory';
import { isDescription } from '../../../contracts/statistics';
import { completeStep } from '../../runtime/complete-step';
import { MEMORY_UPDATE_SYSTEM, memoryExtractUserPrompt } from './prompt';
import { parseModelJson } from '../../../platform/llm';
import { metrics } from '../../../platform/metrics';
import { ModelOutputInvalidError, UpstreamUnavailableError } from '../../../platform/llm/errors';
import {
  memorySummary,
  recordExtractedMemories,
  recordTestedHypotheses,
  type ExtractedMemory,
  type TestedHypothesisEntry,
} from '../../../platform/memory';
import type { StepDeps } from '../../runtime/step-deps';
import { announceAgentCompleted, announceAgentStarted } from '../../runtime/stream-agent-reply';
import type { ValidatedFinding } from '../run-gates';

const CONFIDENCE: Record<GateVerdict, number> = { validated: 0.9, conditional: 0.6, rejected: 0.4 };
const EFFECT_KEYS = ['effect', 'rho', 'change', 'correlation'];

function effectOf(numbers: ValidatedFinding['finding']['numbers']): number | null {
  for (const key of EFFECT_KEYS) {
    const value = numbers[key];
    if (typeof value === 'number') return value;
  }
  return null;
}

/** What a finding tested, as memory keys it: the same kind, feature, target and window is the same hypothesis. */
const testedKey = (finding: Pick<ValidatedFinding['finding'], 'kind' | 'feature' | 'target' | 'window'>) =>
  [finding.kind, finding.feature, finding.target ?? '-', finding.window].join('|');

const MAX_TEXT_CHARS = 500;

/** A number as an insight states it: enough digits to tell effects apart, no float noise. */
const stated = (value: number) => String(Number(value.toPrecision(3)));

/**
 * The insight a validated finding becomes: its claim with its verdict, effect and n, one plain sentence
 * (`… (validated, effect -0.34, n=87).`), cut to fit the 500 characters of an entry.
 */
function insightText(finding: ValidatedFinding['finding'], effect: number | null): string {
  const evidence = ['validated', ...(effect === null ? [] : [`effect ${stated(effect)}`]), `n=${finding.n}`];
  const suffix = ` (${evidence.join(', ')}).`;
  const claim = finding.claim
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!?]+$/, '');
  return `${claim.slice(0, MAX_TEXT_CHARS - suffix.length)}${suffix}`;
}

/**
 * What memory keeps of a processed finding: its `tested_hypothesis` bookkeeping and, for a validated
 * inference, an `insight` with the same meta (docs/design.md#categories). A description, even validated,
 * is a level of the window's rows, not a durable insight: it is bookkeeping only, like a conditional or
 * rejected finding.
 */
export function testedHypothesis(validated: ValidatedFinding): TestedHypothesisEntry {
  const { finding, verdict } = validated;
  const effect = effectOf(finding.numbers);
  const insight = verdict === 'validated' && !isDescription(validated);
  return {
    text: finding.claim,
    confidence: CONFIDENCE[verdict],
    meta: {
      finding_id: finding.id,
      feature: finding.feature,
      target: finding.target,
      verdict,
      effect,
      tested: testedKey(finding),
    },
    ...(insight ? { insight: { text: insightText(finding, effect), confidence: CONFIDENCE[verdict] } } : {}),
  };
}

export interface RememberTurnInput {
  turnId: string;
  userId: string;
  /** `context.include_memory`: false, and the extractor is not shown what memory holds. Absent: true. */
  includeMemory?: boolean;
  /**
   * The turn's memory summary, read once at its start ('' when none or `include_memory` is false): what
   * the extractor is shown as already remembered. Absent only for turns started before it was passed,
   * whose extractor reads the summary itself.
   */
  memory?: string;
  userMessage: string;
  /** The answer the user got; '' when there is none to learn from. */
  answer: string;
  validated: ValidatedFinding[];
}

const extractedSchema = z.array(z.unknown());
const entrySchema = z.object({
  category: z.enum(MEMORY_CATEGORIES),
  text: z.string().trim().min(1).max(500),
  confidence: z.number().min(0).max(1).default(0.7),
});

/** The extractor's entries; anything malformed is dropped, a failed call is no entries (`[]`). */
async function extractMemories(
  deps: StepDeps,
  input: RememberTurnInput,
): Promise<{ entries: ExtractedMemory[]; costUsd: number }> {
  try {
    // The extractor sees what is already remembered (the turn's snapshot), unless the turn keeps memory
    // out of every prompt.
    const remembered =
      input.memory ?? (input.includeMemory === false ? '' : await memorySummary(deps.pool, input.userId));
    const inputs = { userMessage: input.userMessage, answer: input.answer, remembered };
    const response = await completeStep(deps, {
      turnId: input.turnId,
      step: 'memory',
      inputs,
      model: deps.models.fast,
      system: MEMORY_UPDATE_SYSTEM,
      // Shown as ALREADY REMEMBERED in its user prompt instead: what not to write again.
      memory: undefined,
      prompt: memoryExtractUserPrompt(inputs),
      maxTokens: 600,
    });
    const items = parseModelJson(response.text, extractedSchema, response.requestId);
    const entries = items.flatMap((item) => {
      const parsed = entrySchema.safeParse(item);
      return parsed.success ? [parsed.data] : [];
    });
    return { entries, costUsd: response.costUsd };
  } catch (err) {
    if (!(err instanceof ModelOutputInvalidError || err instanceof UpstreamUnavailableError)) throw err;
    log.warn('memory extraction skipped', { turnId: input.turnId, error: err.message });
    return { entries: [], costUsd: 0 };
  }
}

/**
 * The memory agent's `output_summary`: `+3 entries (1 insight, 1 goal, 1 history)`, and, when entries were left
 * out because they looked like credentials, how many (`; 1 not remembered: it looked like a secret`): the user
 * sees that Amy did not keep what they pasted, and nothing of it.
 */
function summariseAdded(counts: Record<string, number>, withheld: number): string {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([category, n]) => `${n} ${category}`);
  const added = `+${total} ${total === 1 ? 'entry' : 'entries'}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
  if (withheld === 0) return added;
  return `${added}; ${withheld} not remembered: ${withheld === 1 ? 'it' : 'they'} looked like a secret`;
}

export function createRememberTurn(deps: StepDeps) {
  return async function rememberTurn(input: RememberTurnInput): Promise<{ added: number }> {
    const { turnId, userId } = input;
    const startedAt = deps.clock();
    await announceAgentStarted(deps.events, {
      turnId,
      agent: 'memory',
      invocation: 'memory',
      question: 'What from this turn is worth remembering?',
      at: startedAt,
    });
    const extracted = await extractMemories(deps, input);
    const { written, withheld } = await recordExtractedMemories(deps.pool, {
      userId,
      turnId,
      entries: extracted.entries,
    });
    const tested = await recordTestedHypotheses(deps.pool, {
      userId,
      turnId,
      entries: input.validated.map(testedHypothesis),
    });
    const secrets = [...withheld, ...tested.withheld];
    if (secrets.length > 0) {
      // The kinds, never the text: the point is that it is written nowhere.
      log.warn('memory entries that looked like credentials were not written', { turnId, kinds: secrets });
      for (const kind of secrets) metrics.memoryEntryWithheld(kind);
    }
    const counts: Record<string, number> = {};
    for (const entry of written) counts[entry.category] = (counts[entry.category] ?? 0) + 1;
    if (tested.insights > 0) counts.insight = (counts.insight ?? 0) + tested.insights;
    if (tested.tested > 0) counts.tested_hypothesis = tested.tested;
    await announceAgentCompleted(deps.events, {
      turnId,
      agent: 'memory',
      invocation: 'memory',
      startedAt,
      at: deps.clock(),
      costUsd: extracted.costUsd,
      output: summariseAdded(counts, secrets.length),
    });
    return { added: written.length + tested.insights + tested.tested };
  };
}

export interface RecallMemoryInput {
  userId: string;
  /** `context.include_memory`: false skips injection entirely. */
  includeMemory: boolean;
  /**
   * `context.include_biomarkers`: false leaves out what validation remembered about lab biomarkers, whose text
   * carries lab values. Absent (turns recorded before it was passed): true.
   */
  includeBiomarkers?: boolean;
}

/**
 * The memory summary for this turn's agents, read once at the start of the turn so every agent sees
 * the same memory and nothing written during the turn leaks into it (docs/design.md#injection: agents cannot change
 * memory mid-turn).
 */
export function createRecallMemory(deps: StepDeps) {
  return async function recallMemory(input: RecallMemoryInput): Promise<{ summary: string }> {
    if (!input.includeMemory) return { summary: '' };
    return {
      summary: await memorySummary(deps.pool, input.userId, { withoutLabs: input.includeBiomarkers === false }),
    };
  };
}
