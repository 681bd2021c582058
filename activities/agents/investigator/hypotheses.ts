/**
 * The Investigator's hypotheses (docs/design.md#hypothesis-investigator): what the model proposes,
 * read leniently — an element that is malformed, names a column that is no daily metric, or repeats
 * one already proposed or already tested is dropped, and the rest are kept.
 */
import { z } from 'zod';
import { FINDING_KINDS, type FindingKind } from '../../../contracts/findings';
import { DAILY_METRICS, type DailyMetric } from '../../../contracts/health-records';

export interface Hypothesis {
  id: string;
  title: string;
  rationale: string;
  test_plan: string;
  data_required: string[];
  missing_data_flag: boolean;
  expected_impact: string;
  /** 0–1: the order in which hypotheses are tested. */
  confidence: number;
  next_action: string;
  kind: FindingKind;
  feature_to_test: DailyMetric;
  /** The other metric of an association; null for a trend or a scalar. */
  target_to_test: DailyMetric | null;
}

const isDailyMetric = (column: string): column is DailyMetric => (DAILY_METRICS as readonly string[]).includes(column);

const text = z.string().catch('');
const proposedSchema = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  title: z.string().trim().min(1),
  rationale: text,
  test_plan: text,
  data_required: z.union([z.array(z.string()), z.string().transform((s) => [s])]).catch([]),
  missing_data_flag: z.boolean().catch(false),
  expected_impact: z.union([z.string(), z.number().transform(String)]).catch(''),
  confidence: z.coerce.number().min(0).max(1),
  next_action: text,
  kind: z.enum(FINDING_KINDS),
  feature_to_test: z.string(),
  target_to_test: z.string().nullable().optional(),
});

/** What the model answered: an array of hypotheses, or an object holding one under `hypotheses`. */
export const proposalsSchema = z.union([
  z.array(z.unknown()),
  z.object({ hypotheses: z.array(z.unknown()) }).transform((o) => o.hypotheses),
]);

/** The hypothesis' identity: also its finding's id, stable across turns so memory can tell it was tested. */
export function hypothesisKey(h: { kind: FindingKind; feature: string; target: string | null }): string {
  return `inv-${h.kind}-${h.feature}${h.kind === 'association' && h.target ? `-${h.target}` : ''}`;
}

/** Spearman's ρ is symmetric, so an association and its mirror image are one hypothesis. */
function sameHypothesisKey(h: { kind: FindingKind; feature: string; target: string | null }): string {
  if (h.kind !== 'association' || !h.target) return hypothesisKey(h);
  const [a, b] = [h.feature, h.target].sort();
  return hypothesisKey({ kind: h.kind, feature: a, target: b });
}

interface DroppedProposal {
  index: number;
  reason: 'malformed' | 'not_a_daily_metric' | 'duplicate' | 'already_tested';
  detail: string;
}

export interface ReadProposals {
  hypotheses: Hypothesis[];
  dropped: DroppedProposal[];
}

/** A hypothesis already tested in an earlier turn, as far as its memory entry tells. */
export interface TestedKey {
  kind: FindingKind;
  feature: string;
  target: string | null;
}

/**
 * The proposals worth keeping, in the model's order. `tested` are the already-tested hypotheses: the
 * prompt lists them, and this drops any proposal that repeats one anyway.
 */
export function readProposals(proposals: readonly unknown[], tested: readonly TestedKey[]): ReadProposals {
  const testedKeys = new Set(tested.map(sameHypothesisKey));
  const seen = new Set<string>();
  const hypotheses: Hypothesis[] = [];
  const dropped: DroppedProposal[] = [];
  proposals.forEach((proposal, index) => {
    const parsed = proposedSchema.safeParse(proposal);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      dropped.push({ index, reason: 'malformed', detail });
      return;
    }
    const p = parsed.data;
    const target = p.kind === 'association' ? (p.target_to_test ?? null) : null;
    if (p.kind === 'association' && !target) {
      dropped.push({ index, reason: 'malformed', detail: 'an association without a target' });
      return;
    }
    const unknown = [p.feature_to_test, ...(target ? [target] : [])].filter((c) => !isDailyMetric(c));
    if (unknown.length > 0) {
      dropped.push({ index, reason: 'not_a_daily_metric', detail: unknown.join(', ') });
      return;
    }
    if (p.kind === 'association' && target === p.feature_to_test) {
      dropped.push({ index, reason: 'malformed', detail: 'an association of a metric with itself' });
      return;
    }
    const key = sameHypothesisKey({ kind: p.kind, feature: p.feature_to_test, target });
    if (testedKeys.has(key)) {
      dropped.push({ index, reason: 'already_tested', detail: key });
      return;
    }
    if (seen.has(key)) {
      dropped.push({ index, reason: 'duplicate', detail: key });
      return;
    }
    seen.add(key);
    hypotheses.push({
      id: p.id === undefined ? `h${index + 1}` : String(p.id),
      title: p.title,
      rationale: p.rationale,
      test_plan: p.test_plan,
      data_required: p.data_required,
      missing_data_flag: p.missing_data_flag,
      expected_impact: p.expected_impact,
      confidence: p.confidence,
      next_action: p.next_action,
      kind: p.kind,
      feature_to_test: p.feature_to_test as DailyMetric,
      target_to_test: target as DailyMetric | null,
    });
  });
  return { hypotheses, dropped };
}

/** How many of the proposed hypotheses are tested, best first. */
const AUTO_TEST_TOP_K = 3;

/** The K hypotheses to test: highest confidence first, the model's order breaking ties. */
export function topHypotheses(hypotheses: readonly Hypothesis[], k = AUTO_TEST_TOP_K): Hypothesis[] {
  return hypotheses
    .map((h, order) => ({ h, order }))
    .sort((a, b) => b.h.confidence - a.h.confidence || a.order - b.order)
    .map(({ h }) => h)
    .slice(0, k);
}
