/**
 * What the user's memory says was already tested (docs/design.md#memory: the validator writes one
 * `tested_hypothesis` entry per processed finding, "so the Hypothesis Investigator doesn't re-propose
 * them"). Read here rather than from the memory summary because the Investigator needs each entry's
 * kind, feature and target, not its prose.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import { FINDING_KINDS, type FindingKind } from '../../../contracts/findings';
import { testedHypothesisEntries, type MemoryReadScope } from '../../../platform/memory';
import type { TestedKey } from './hypotheses';

export interface TestedHypothesis {
  findingId: string;
  /** null when the entry does not say: a trend and a scalar on one metric cannot be told apart. */
  kind: FindingKind | null;
  feature: string;
  target: string | null;
  verdict: string;
  effect: number | null;
  claim: string;
}

/** Enough for the prompt; older entries are the least likely to be proposed again. */
const TESTED_HYPOTHESES_LIMIT = 50;

const metaSchema = z.object({
  finding_id: z.string().min(1),
  feature: z.string().min(1),
  target: z.string().nullable().catch(null),
  verdict: z.string().catch('tested'),
  effect: z.number().nullable().catch(null),
});

const INVESTIGATOR_ID = new RegExp(`^inv-(${FINDING_KINDS.join('|')})-`);

/**
 * The meta carries no kind. An Investigator finding's id names it; any other finding with a target
 * is an association (the only kind that has one); otherwise the kind is unknown.
 */
function kindOf(findingId: string, target: string | null): FindingKind | null {
  const named = INVESTIGATOR_ID.exec(findingId)?.[1] as FindingKind | undefined;
  return named ?? (target !== null ? 'association' : null);
}

/**
 * The user's tested hypotheses in `scope`, newest first, each with the verdict of its newest test (memory keeps the
 * earlier tests' entries too: platform/memory.ts, SUPERSEDED); entries with unreadable meta are skipped.
 */
export async function readTestedHypotheses(
  pool: Pool,
  userId: string,
  scope: MemoryReadScope = {},
  limit = TESTED_HYPOTHESES_LIMIT,
): Promise<TestedHypothesis[]> {
  const rows = await testedHypothesisEntries(pool, userId, scope);
  const tested: TestedHypothesis[] = [];
  for (const row of rows) {
    const meta = metaSchema.safeParse(row.meta);
    if (!meta.success) continue;
    const { finding_id: findingId, feature, target, verdict, effect } = meta.data;
    tested.push({ findingId, kind: kindOf(findingId, target), feature, target, verdict, effect, claim: row.text });
    if (tested.length === limit) break;
  }
  return tested;
}

/** The entries whose kind is known: only those can be matched against a proposal. */
export const testedKeys = (tested: readonly TestedHypothesis[]): TestedKey[] =>
  tested.flatMap(({ kind, feature, target }) => (kind === null ? [] : [{ kind, feature, target }]));
