/** The user's long-term memory (seed 004) as the steps of a turn read and write it. */
import { ulid } from 'ulid';
import { ID_PREFIXES } from '../../contracts/ids';
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
  text: string;
  confidence: number;
  meta: { finding_id: string; feature: string; target: string | null; verdict: string; effect: number | null };
}

/**
 * Writes one `tested_hypothesis` entry per processed finding of a turn. Written once per (turn,
 * finding): a retried memory step finds the entries already there and adds nothing.
 */
export async function recordTestedHypotheses(
  db: Db,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: TestedHypothesisEntry[] },
): Promise<number> {
  if (entries.length === 0) return 0;
  return db.$transaction(async (tx) => {
    const existing = await tx.memoryEntry.findMany({
      where: { userId, sourceTurnId: turnId, category: 'tested_hypothesis' },
      select: { meta: true },
    });
    const recorded = new Set(existing.map((row) => (row.meta as { finding_id?: string } | null)?.finding_id));
    const fresh = entries.filter((entry) => !recorded.has(entry.meta.finding_id));
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
