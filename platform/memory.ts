/**
 * The user's long-term memory (docs/design.md#memory): every query on `memory_entries`, for the API (a user's pages,
 * their own writes and hard deletes) and for the steps of a turn (the injected summary, the extractor's
 * and the validator's writes, what the Critic and the Investigator read). Every query is scoped to the
 * owner. `created_at` is a timestamptz: instants go in and come out as such, in any time zone.
 */
import type { Pool, PoolClient } from 'pg';
import { MEMORY_CATEGORIES, TESTED_HYPOTHESIS, type Memory } from '../contracts/memory';
import { newId } from './ids';
import { inTransaction } from './pg-pool';

interface MemoryRow {
  id: string;
  text: string;
  category: Memory['category'];
  created_at: Date;
  source_turn_id: string | null;
  confidence: number;
  meta: Record<string, unknown> | null;
}

const MEMORY_COLUMNS = 'id, text, category, created_at, source_turn_id, confidence, meta';

const toMemory = (row: MemoryRow): Memory => ({
  id: row.id,
  text: row.text,
  category: row.category,
  created_at: row.created_at.toISOString(),
  source_turn_id: row.source_turn_id,
  confidence: row.confidence,
  meta: row.meta,
});

export interface MemoryPageQuery {
  /** Only this category. */
  category?: string;
  /** Leave this category out (ignored when `category` is given). */
  excludeCategory?: string;
  /** Strict bounds on created_at: ISO-8601 instants, with Z or an offset. */
  after?: string;
  before?: string;
  /** Entries after this one in the page order: its created_at (an ISO-8601 instant) and id. */
  position?: { createdAt: string; id: string };
  limit: number;
}

/**
 * One page of the user's memory, newest first by created_at then id, so pages neither repeat nor
 * skip an entry even when several share a millisecond.
 */
export async function listMemoryPage(
  pool: Pool,
  userId: string,
  query: MemoryPageQuery,
): Promise<{ entries: Memory[]; hasMore: boolean }> {
  const params: unknown[] = [userId];
  const param = (value: unknown) => params.push(value);
  const where = ['user_id = $1'];
  if (query.category) where.push(`category = $${param(query.category)}`);
  else if (query.excludeCategory) where.push(`category <> $${param(query.excludeCategory)}`);
  if (query.after) where.push(`created_at > $${param(query.after)}::timestamptz`);
  if (query.before) where.push(`created_at < $${param(query.before)}::timestamptz`);
  if (query.position) {
    const { createdAt, id } = query.position;
    where.push(`(created_at, id) < ($${param(createdAt)}::timestamptz, $${param(id)})`);
  }
  const { rows } = await pool.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memory_entries WHERE ${where.join(' AND ')}
     ORDER BY created_at DESC, id DESC LIMIT $${param(query.limit + 1)}`,
    params,
  );
  return { entries: rows.slice(0, query.limit).map(toMemory), hasMore: rows.length > query.limit };
}

/** An entry the user wrote themselves: no source turn. */
export async function createUserMemory(
  pool: Pool,
  userId: string,
  entry: { category: string; text: string; confidence: number; meta: Record<string, unknown> | null },
  { maxEntries = Infinity }: { maxEntries?: number } = {},
): Promise<Memory | null> {
  return inTransaction(pool, async (client) => {
    // One writer per user at a time, so the count and the insert agree.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [userId]);
    const { rows: counted } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM memory_entries WHERE user_id = $1 AND source_turn_id IS NULL',
      [userId],
    );
    if (counted[0].n >= maxEntries) return null;
    const { rows } = await client.query<MemoryRow>(
      `INSERT INTO memory_entries (id, user_id, category, text, confidence, source_turn_id, meta)
       VALUES ($1, $2, $3, $4, $5, NULL, $6)
       RETURNING ${MEMORY_COLUMNS}`,
      [
        newId('memory'),
        userId,
        entry.category,
        entry.text,
        entry.confidence,
        entry.meta === null ? null : JSON.stringify(entry.meta),
      ],
    );
    return toMemory(rows[0]);
  });
}

/** Hard delete; false when the user has no such entry (another user's included). */
export async function deleteMemory(pool: Pool, userId: string, memoryId: string): Promise<boolean> {
  const { rowCount } = await pool.query('DELETE FROM memory_entries WHERE id = $1 AND user_id = $2', [
    memoryId,
    userId,
  ]);
  return rowCount !== 0;
}

export interface MemoryEntry {
  category: string;
  text: string;
}

/** The user's most recent entries of the given categories, newest first. */
export async function recentMemory(
  pool: Pool,
  userId: string,
  { categories, limit }: { categories: readonly string[]; limit: number },
): Promise<MemoryEntry[]> {
  const { rows } = await pool.query<MemoryEntry>(
    `SELECT category, text FROM memory_entries WHERE user_id = $1 AND category = ANY($2::text[])
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [userId, [...categories], limit],
  );
  return rows;
}

/** The user's `tested_hypothesis` entries, newest first: their text and their meta as written. */
export async function testedHypothesisEntries(
  pool: Pool,
  userId: string,
): Promise<Array<{ text: string; meta: unknown }>> {
  const { rows } = await pool.query<{ text: string; meta: unknown }>(
    `SELECT text, meta FROM memory_entries WHERE user_id = $1 AND category = $2 ORDER BY created_at DESC, id DESC`,
    [userId, TESTED_HYPOTHESIS],
  );
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
  meta: {
    finding_id: string;
    feature: string;
    target: string | null;
    verdict: string;
    effect: number | null;
    /** What was tested — kind, feature, target and window — the key a hypothesis is remembered under once. */
    tested?: string;
  };
}

/** Inserts a turn's entries in one statement (the rows travel as one JSON array). */
async function insertTurnEntries(
  client: PoolClient,
  { userId, turnId }: { userId: string; turnId: string },
  entries: Array<{ category: string; text: string; confidence: number; meta: object | null }>,
): Promise<void> {
  await client.query(
    `INSERT INTO memory_entries (id, user_id, category, text, confidence, source_turn_id, meta)
     SELECT e.id, $1, e.category, e.text, e.confidence, $2, e.meta
     FROM jsonb_to_recordset($3::jsonb) AS e (id text, category text, text text, confidence float8, meta jsonb)`,
    [userId, turnId, JSON.stringify(entries.map((entry) => ({ id: newId('memory'), ...entry })))],
  );
}

/**
 * Writes one `tested_hypothesis` entry per processed finding of a turn, one per hypothesis across turns:
 * an entry whose `meta.tested` (kind, feature, target, window) is already remembered replaces that
 * entry's outcome rather than adding another, so asking the same thing every day keeps one entry with
 * the latest verdict. Without a `tested` key (entries from before it), finding ids deduplicate within
 * their scope (`meta.finding_id`). A retried memory step adds nothing.
 */
export async function recordTestedHypotheses(
  pool: Pool,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: TestedHypothesisEntry[] },
): Promise<number> {
  if (entries.length === 0) return 0;
  return inTransaction(pool, async (client) => {
    const existing = await client.query<{
      id: string;
      finding_id: string | null;
      tested: string | null;
      source_turn_id: string | null;
    }>(
      `SELECT id, meta->>'finding_id' AS finding_id, meta->>'tested' AS tested, source_turn_id FROM memory_entries
       WHERE user_id = $1 AND category = $2 FOR UPDATE`,
      [userId, TESTED_HYPOTHESIS],
    );
    const byTested = new Map(existing.rows.filter((row) => row.tested).map((row) => [row.tested!, row]));
    const forUser = new Set(existing.rows.map((row) => row.finding_id));
    const forTurn = new Set(existing.rows.filter((row) => row.source_turn_id === turnId).map((row) => row.finding_id));
    const fresh: TestedHypothesisEntry[] = [];
    let updated = 0;
    for (const entry of entries) {
      const known = entry.meta.tested ? byTested.get(entry.meta.tested) : undefined;
      if (known) {
        // The same hypothesis tested again: a retried step changes nothing, a later turn brings it up to date.
        if (known.source_turn_id === turnId) continue;
        await client.query(
          `UPDATE memory_entries SET text = $2, confidence = $3, meta = $4::jsonb, source_turn_id = $5, created_at = now()
           WHERE id = $1`,
          [known.id, entry.text, entry.confidence, JSON.stringify(entry.meta), turnId],
        );
        updated++;
      } else if (!(entry.scope === 'user' ? forUser : forTurn).has(entry.meta.finding_id)) {
        fresh.push(entry);
      }
    }
    await insertTurnEntries(
      client,
      { userId, turnId },
      fresh.map(({ text, confidence, meta }) => ({ category: TESTED_HYPOTHESIS, text, confidence, meta })),
    );
    return fresh.length + updated;
  });
}

/**
 * What the extractor writes: the categories a user may write too (docs/design.md#categories);
 * `tested_hypothesis` is internal.
 */
export interface ExtractedMemory {
  category: (typeof MEMORY_CATEGORIES)[number];
  text: string;
  confidence: number;
}

/** Text as memory compares it: case, spacing and closing punctuation aside. */
const sameText = (text: string) =>
  text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[\s.!?]+$/, '')
    .trim();

/**
 * Writes what the extractor found in a turn, once: a retried memory step finds the turn's entries
 * already there and writes nothing, and an entry the user's memory already holds (the same category
 * and text, from any turn) is not written again. Returns the entries written.
 */
export async function recordExtractedMemories(
  pool: Pool,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: ExtractedMemory[] },
): Promise<ExtractedMemory[]> {
  if (entries.length === 0) return [];
  return inTransaction(pool, async (client) => {
    const already = await client.query(
      'SELECT 1 FROM memory_entries WHERE user_id = $1 AND source_turn_id = $2 AND category = ANY($3::text[]) LIMIT 1',
      [userId, turnId, [...MEMORY_CATEGORIES]],
    );
    if (already.rowCount !== 0) return [];
    const remembered = await client.query<{ category: string; text: string }>(
      'SELECT category, text FROM memory_entries WHERE user_id = $1 AND category = ANY($2::text[])',
      [userId, [...MEMORY_CATEGORIES]],
    );
    const known = new Set(remembered.rows.map((row) => `${row.category}:${sameText(row.text)}`));
    const fresh = entries.filter((entry) => {
      const key = `${entry.category}:${sameText(entry.text)}`;
      if (known.has(key)) return false;
      known.add(key);
      return true;
    });
    await insertTurnEntries(
      client,
      { userId, turnId },
      fresh.map(({ category, text, confidence }) => ({ category, text, confidence, meta: null })),
    );
    return fresh;
  });
}

/** How many entries the injected summary holds at most (docs/design.md#caps). */
const MEMORY_SUMMARY_LIMIT = 80;

const SUMMARY_SECTIONS: Array<{ category: string; title: string }> = [
  { category: 'goal', title: 'Goals' },
  { category: 'preference', title: 'Preferences' },
  { category: 'insight', title: 'Insights' },
  { category: 'history', title: 'History' },
  { category: TESTED_HYPOTHESIS, title: 'Tested hypotheses (already validated/rejected)' },
];

type SummaryEntry = Pick<MemoryRow, 'category' | 'text' | 'created_at' | 'meta'>;

/** An entry is one line of the summary, whatever its text holds: a newline cannot forge a heading or an entry. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function summaryLine(entry: SummaryEntry): string {
  const day = entry.created_at.toISOString().slice(0, 10);
  const text = oneLine(entry.text);
  if (entry.category !== TESTED_HYPOTHESIS) return `- (${day}) ${text}`;
  const meta = (entry.meta ?? {}) as { verdict?: string; effect?: number | null };
  const effect = typeof meta.effect === 'number' ? ` (effect ${Number(meta.effect.toFixed(3))})` : '';
  return `- (${day}) [${meta.verdict ?? 'tested'}] ${text}${effect}`;
}

/**
 * The compact memory summary injected into the agents' system prompts (docs/design.md#injection):
 * the most recent entries, at most 80, grouped by category, newest first in each group.
 * '' when the user has no memory.
 */
export async function memorySummary(pool: Pool, userId: string): Promise<string> {
  const { rows: entries } = await pool.query<SummaryEntry>(
    `SELECT category, text, created_at, meta FROM memory_entries WHERE user_id = $1
     ORDER BY created_at DESC, id DESC LIMIT $2`,
    [userId, MEMORY_SUMMARY_LIMIT],
  );
  return SUMMARY_SECTIONS.flatMap(({ category, title }) => {
    const lines = entries.filter((e) => e.category === category).map(summaryLine);
    return lines.length > 0 ? [`## ${title}\n${lines.join('\n')}`] : [];
  }).join('\n');
}
