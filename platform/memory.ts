/** The user's long-term memory (seed 004) as the steps of a turn read and write it. */
import { ulid } from 'ulid';
import { ID_PREFIXES } from '../contracts/ids';
import { MEMORY_CATEGORIES } from '../contracts/memory';
import type { Db } from './db';

export interface MemoryEntry {
  category: string;
  text: string;
}

/** The user's most recent entries of the given categories, newest first. */
export async function recentMemory(
  db: Db,
  userId: string,
  { categories, limit }: { categories: readonly string[]; limit: number },
): Promise<MemoryEntry[]> {
  const rows = await db.memoryEntry.findMany({
    where: { userId, category: { in: [...categories] } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit,
    select: { category: true, text: true },
  });
  return rows;
}

export interface TestedHypothesisEntry {
  /**
   * `user`: the finding id names the hypothesis itself (the Investigator's `inv-<kind>-<feature>…`), so
   * it is written once per user however often it is re-tested; `turn`: the id is only unique within
   * its turn (`ds-001`), so it is written once per turn.
   */
  scope: 'user' | 'turn';
  text: string;
  confidence: number;
  meta: { finding_id: string; feature: string; target: string | null; verdict: string; effect: number | null };
}

/**
 * Writes one `tested_hypothesis` entry per processed finding of a turn, deduplicated by finding id
 * within its scope (seed 002: "appendMany dedupes by meta.finding_id"): a retried memory step, or a
 * hypothesis tested again in a later turn, adds nothing.
 */
export async function recordTestedHypotheses(
  db: Db,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: TestedHypothesisEntry[] },
): Promise<number> {
  if (entries.length === 0) return 0;
  return db.$transaction(async (tx) => {
    const existing = await tx.memoryEntry.findMany({
      where: { userId, category: 'tested_hypothesis' },
      select: { meta: true, sourceTurnId: true },
    });
    const findingId = (meta: unknown) => (meta as { finding_id?: string } | null)?.finding_id;
    const forUser = new Set(existing.map((row) => findingId(row.meta)));
    const forTurn = new Set(existing.filter((row) => row.sourceTurnId === turnId).map((row) => findingId(row.meta)));
    const fresh = entries.filter((entry) => !(entry.scope === 'user' ? forUser : forTurn).has(entry.meta.finding_id));
    await tx.memoryEntry.createMany({
      data: fresh.map((entry) => ({
        id: ID_PREFIXES.memory + ulid(),
        userId,
        category: 'tested_hypothesis',
        text: entry.text,
        confidence: entry.confidence,
        sourceTurnId: turnId,
        meta: entry.meta,
      })),
    });
    return fresh.length;
  });
}

/** What the extractor writes: the categories a user may write too (seed 004); `tested_hypothesis` is internal. */

export interface ExtractedMemory {
  category: (typeof MEMORY_CATEGORIES)[number];
  text: string;
  confidence: number;
}

/**
 * Writes what the extractor found in a turn, once: a retried memory step finds the turn's entries
 * already there and writes nothing. Returns the entries written.
 */
export async function recordExtractedMemories(
  db: Db,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: ExtractedMemory[] },
): Promise<ExtractedMemory[]> {
  if (entries.length === 0) return [];
  return db.$transaction(async (tx) => {
    const already = await tx.memoryEntry.count({
      where: { userId, sourceTurnId: turnId, category: { in: [...MEMORY_CATEGORIES] } },
    });
    if (already > 0) return [];
    await tx.memoryEntry.createMany({
      data: entries.map((entry) => ({
        id: ID_PREFIXES.memory + ulid(),
        userId,
        category: entry.category,
        text: entry.text,
        confidence: entry.confidence,
        sourceTurnId: turnId,
      })),
    });
    return entries;
  });
}

/** How many entries the injected summary holds at most (seed 004: "capped at ~80 entries"). */
export const MEMORY_SUMMARY_LIMIT = 80;

const SUMMARY_SECTIONS: Array<{ category: string; title: string }> = [
  { category: 'goal', title: 'Goals' },
  { category: 'preference', title: 'Preferences' },
  { category: 'insight', title: 'Insights' },
  { category: 'history', title: 'History' },
  { category: 'tested_hypothesis', title: 'Tested hypotheses (already validated/rejected)' },
];

interface StoredEntry {
  category: string;
  text: string;
  createdAt: Date;
  meta: unknown;
}

function summaryLine(entry: StoredEntry): string {
  const day = entry.createdAt.toISOString().slice(0, 10);
  if (entry.category !== 'tested_hypothesis') return `- (${day}) ${entry.text}`;
  const meta = (entry.meta ?? {}) as { verdict?: string; effect?: number | null };
  const effect = typeof meta.effect === 'number' ? ` (effect ${Number(meta.effect.toFixed(3))})` : '';
  return `- (${day}) [${meta.verdict ?? 'tested'}] ${entry.text}${effect}`;
}

/**
 * The compact memory summary injected into the agents' system prompts (seed 004, "How injection
 * works"): the most recent entries, at most 80, grouped by category, newest first in each group.
 * '' when the user has no memory.
 */
export async function memorySummary(db: Db, userId: string): Promise<string> {
  const entries = await db.memoryEntry.findMany({
    where: { userId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: MEMORY_SUMMARY_LIMIT,
    select: { category: true, text: true, createdAt: true, meta: true },
  });
  return SUMMARY_SECTIONS.flatMap(({ category, title }) => {
    const lines = entries.filter((e) => e.category === category).map(summaryLine);
    return lines.length > 0 ? [`## ${title}\n${lines.join('\n')}`] : [];
  }).join('\n');
}
