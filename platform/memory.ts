/**
 * The user's long-term memory (docs/design.md#memory): every query on `memory_entries`, for the API (a user's pages,
 * their own writes and hard deletes) and for the steps of a turn (the injected summary, the extractor's
 * and the validator's writes, what the Critic and the Investigator read). Every query is scoped to the
 * owner. `created_at` is a timestamptz: instants go in and come out as such, in any time zone.
 *
 * Memory is kept until the user deletes it (their DELETE /v1/memory/:id, `amy reset`, account deletion):
 * no writer here deletes or edits an entry, and nothing expires one. What is newer is read first instead.
 * And it never holds a secret: every writer here refuses text that looks like a credential
 * (./credentials-in-text.ts), the user's own (CredentialInMemoryError) and the turns' (left out, by kind).
 */
import type { Pool, PoolClient } from 'pg';
import { MEMORY_CATEGORIES, TESTED_HYPOTHESIS, type Memory } from '../contracts/memory';
import { CREDENTIAL_DESCRIPTIONS, findCredential, type CredentialKind } from './credentials-in-text';
import { LAB_BIOMARKER_NAMES } from './health-data/labs';
import { newId } from './ids';
import { inTransaction } from './pg-pool';
import { memoryCreatedEvent, recordWebhookEvents } from './webhooks/outbox';

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

/**
 * Serialises the memory writes of one user (docs/design.md#memory-writes): every writer takes this
 * transaction-scoped lock before it reads what memory holds, so two turns (or a turn and the API) that
 * write at once cannot both find an extracted entry new and both write it, nor both pass the cap; and a
 * user's entries are written in increasing `created_at`, which tells which test of a hypothesis is the
 * newest. The first key names memory's locks, so they share no key with another table's; the second is
 * the user's.
 * Returns the user's latest `created_at` (null without entries), which the next entries must follow.
 */
async function lockUserMemory(client: PoolClient, userId: string): Promise<Date | null> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('memory_entries'), hashtext($1))", [userId]);
  const { rows } = await client.query<{ latest: Date | null }>(
    'SELECT max(created_at) AS latest FROM memory_entries WHERE user_id = $1',
    [userId],
  );
  return rows[0].latest;
}

/**
 * The `created_at` of an entry written now, the SQL for it given the parameter that holds the user's latest
 * `created_at` (lockUserMemory): the instant it is written, taken after the user's lock
 * (clock_timestamp(), not the transaction's start), and at least a millisecond after every entry the user
 * already has. So a user's entries are written in increasing `created_at`, in the order they commit:
 * a client syncing with `GET /v1/memory?after=<the newest it has>` never misses one, not even an entry
 * that replaces another within the same millisecond. (GREATEST ignores the NULL of a user with none.)
 */
const writtenAt = (latestParam: string) =>
  `GREATEST(clock_timestamp(), ${latestParam}::timestamptz + interval '1 millisecond')`;

/** A write refused because its text, or a client's meta, looks like a credential; says which kind, never the text. */
export class CredentialInMemoryError extends Error {
  override name = 'CredentialInMemoryError';
  constructor(
    readonly kind: CredentialKind,
    readonly field: 'text' | 'meta',
  ) {
    super(`the memory entry's ${field} looks like ${CREDENTIAL_DESCRIPTIONS[kind]}`);
  }
}

/**
 * Of a turn's entries, those whose texts hold no credential, and the kinds found in the others: the kinds only,
 * so the caller can say what was left out without repeating it.
 */
function withoutCredentials<T>(
  entries: readonly T[],
  textsOf: (entry: T) => string[],
): { kept: T[]; withheld: CredentialKind[] } {
  const kept: T[] = [];
  const withheld: CredentialKind[] = [];
  for (const entry of entries) {
    const kind = textsOf(entry)
      .map(findCredential)
      .find((found) => found !== null);
    if (kind) withheld.push(kind);
    else kept.push(entry);
  }
  return { kept, withheld };
}

/** An entry the user wrote themselves: no source turn. Throws CredentialInMemoryError for a secret. */
export async function createUserMemory(
  pool: Pool,
  userId: string,
  entry: { category: string; text: string; confidence: number; meta: Record<string, unknown> | null },
  { maxEntries = Infinity }: { maxEntries?: number } = {},
): Promise<Memory | null> {
  const inText = findCredential(entry.text);
  if (inText) throw new CredentialInMemoryError(inText, 'text');
  // A client's annotation is stored and returned like the text; read as its JSON, `{"password": "…"}` is found too.
  const inMeta = entry.meta === null ? null : findCredential(JSON.stringify(entry.meta));
  if (inMeta) throw new CredentialInMemoryError(inMeta, 'meta');
  return inTransaction(pool, async (client) => {
    // One writer per user at a time, so the count and the insert agree.
    const latest = await lockUserMemory(client, userId);
    const { rows: counted } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM memory_entries WHERE user_id = $1 AND source_turn_id IS NULL',
      [userId],
    );
    if (counted[0].n >= maxEntries) return null;
    const { rows } = await client.query<MemoryRow>(
      `INSERT INTO memory_entries (id, user_id, category, text, confidence, source_turn_id, meta, created_at)
       VALUES ($1, $2, $3, $4, $5, NULL, $6, ${writtenAt('$7')})
       RETURNING ${MEMORY_COLUMNS}`,
      [
        newId('memory'),
        userId,
        entry.category,
        entry.text,
        entry.confidence,
        entry.meta === null ? null : JSON.stringify(entry.meta),
        latest,
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

/**
 * What a turn reads of memory: all of it, or, for a turn that says `include_biomarkers: false`, none of the
 * entries validation wrote about a lab biomarker (docs/design.md#lab-results-left-out-of-a-turn).
 */
export interface MemoryReadScope {
  withoutLabs?: boolean;
}

/**
 * The SQL condition that keeps an entry in a read of `scope`, given the parameter that holds `labsParam(scope)`.
 * An entry written from a finding names its feature and target in `meta`; one about a lab biomarker carries the
 * user's lab values (its text, its effect), so a turn without labs does not read it. Any other entry is kept.
 */
const keptBy = (labsParam: string) =>
  `NOT COALESCE(m.meta->>'feature' = ANY(${labsParam}::text[]) OR m.meta->>'target' = ANY(${labsParam}::text[]), false)`;
const labsParam = ({ withoutLabs = false }: MemoryReadScope): readonly string[] =>
  withoutLabs ? LAB_BIOMARKER_NAMES : [];

/**
 * SQL: true when entry `m` is superseded, that is, a turn wrote it about a tested hypothesis (`meta.tested`) and a
 * later turn tested the same hypothesis again (docs/design.md#memory). A superseded entry is still memory: it is
 * kept until the user deletes it and `GET /v1/memory` lists it. Only the readers that act on memory (the injected
 * summary, the Investigator) leave it out, so they read the newest verdict per hypothesis. Entries a client wrote
 * (no source turn) neither supersede nor are superseded, whatever their `meta` says.
 */
const SUPERSEDED = `(m.source_turn_id IS NOT NULL AND m.meta IS NOT NULL AND m.meta ? 'tested' AND EXISTS (
  SELECT 1 FROM memory_entries later
  WHERE later.user_id = m.user_id AND later.source_turn_id IS NOT NULL AND later.source_turn_id <> m.source_turn_id
    AND later.meta->>'tested' = m.meta->>'tested' AND (later.created_at, later.id) > (m.created_at, m.id)))`;

/**
 * The user's `tested_hypothesis` entries in `scope`, newest first, their text and their meta as written: the newest
 * test of each hypothesis only (the entries of earlier tests are kept, but superseded).
 */
export async function testedHypothesisEntries(
  pool: Pool,
  userId: string,
  scope: MemoryReadScope = {},
): Promise<Array<{ text: string; meta: unknown }>> {
  const { rows } = await pool.query<{ text: string; meta: unknown }>(
    `SELECT text, meta FROM memory_entries m
     WHERE m.user_id = $1 AND m.category = $2 AND NOT ${SUPERSEDED} AND ${keptBy('$3')}
     ORDER BY m.created_at DESC, m.id DESC`,
    [userId, TESTED_HYPOTHESIS, labsParam(scope)],
  );
  return rows;
}

/** What a validated finding's memory carries in `meta` (docs/design.md#categories). */
interface FindingMeta {
  finding_id: string;
  feature: string;
  target: string | null;
  verdict: string;
  effect: number | null;
  /** What was tested: kind, feature, target and window. Two tests with the same key tested the same hypothesis. */
  tested: string;
}

export interface TestedHypothesisEntry {
  text: string;
  confidence: number;
  meta: FindingMeta;
  /**
   * For a validated inference: the `insight` entry it also becomes (its meta is the same). A description
   * (a fact about the window's rows) and a conditional or rejected finding are bookkeeping only.
   */
  insight?: { text: string; confidence: number };
}

/** Inserts a turn's entries in one statement (the rows travel as one JSON array). */
async function insertTurnEntries(
  client: PoolClient,
  { userId, turnId, latest }: { userId: string; turnId: string; latest: Date | null },
  entries: Array<{ category: string; text: string; confidence: number; meta: object | null }>,
): Promise<void> {
  if (entries.length === 0) return;
  const { rows } = await client.query<{ id: string; category: string; created_at: Date }>(
    `INSERT INTO memory_entries (id, user_id, category, text, confidence, source_turn_id, meta, created_at)
     SELECT e.id, $1, e.category, e.text, e.confidence, $2, e.meta, ${writtenAt('$4')}
     FROM jsonb_to_recordset($3::jsonb) AS e (id text, category text, text text, confidence float8, meta jsonb)
     RETURNING id, category, created_at`,
    [userId, turnId, JSON.stringify(entries.map((entry) => ({ id: newId('memory'), ...entry }))), latest],
  );
  // `memory.created` per entry, committed with it (./webhooks/outbox.ts).
  await recordWebhookEvents(
    client,
    rows.map((row) =>
      memoryCreatedEvent({ id: row.id, userId, turnId, category: row.category, createdAt: row.created_at }),
    ),
  );
}

/**
 * Writes what validation found in a turn (docs/design.md#extraction): one `tested_hypothesis` entry per
 * processed finding, and an `insight` entry for each validated inference, both with the finding's meta.
 * A hypothesis tested again in a later turn gets new entries beside those of the earlier test, which are kept:
 * memory is kept until the user deletes it, and nothing auto-invalidates an old entry. The readers that act on
 * memory read the newest test of each hypothesis (SUPERSEDED). A retried memory step finds what its turn already
 * wrote and writes nothing twice. A finding whose claim looks like a credential is not written. Returns how many
 * entries of each kind were written, and the kinds of credential of those left out.
 */
export async function recordTestedHypotheses(
  pool: Pool,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: TestedHypothesisEntry[] },
): Promise<{ tested: number; insights: number; withheld: CredentialKind[] }> {
  // Tested twice in one turn (a reflection follow-up asking the same thing): the later outcome counts.
  const { kept: batch, withheld } = withoutCredentials(
    [...new Map(entries.map((entry) => [entry.meta.tested, entry])).values()],
    ({ text, insight }) => (insight ? [text, insight.text] : [text]),
  );
  if (batch.length === 0) return { tested: 0, insights: 0, withheld };
  return inTransaction(pool, async (client) => {
    const latest = await lockUserMemory(client, userId);
    const { rows: written } = await client.query<{ tested: string }>(
      `SELECT DISTINCT meta->>'tested' AS tested FROM memory_entries
       WHERE user_id = $1 AND source_turn_id = $2 AND meta ? 'tested'`,
      [userId, turnId],
    );
    // A retried memory step finds the entries its turn already wrote and does not write them again.
    const already = new Set(written.map((row) => row.tested));
    const fresh = batch.filter((entry) => !already.has(entry.meta.tested));
    const insights = fresh.flatMap(({ insight, meta }) =>
      insight ? [{ category: 'insight', text: insight.text, confidence: insight.confidence, meta }] : [],
    );
    await insertTurnEntries(client, { userId, turnId, latest }, [
      ...fresh.map(({ text, confidence, meta }) => ({ category: TESTED_HYPOTHESIS, text, confidence, meta })),
      ...insights,
    ]);
    return { tested: fresh.length, insights: insights.length, withheld };
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
 * Writes what the extractor found in a turn, once: a retried memory step finds the turn's extracted
 * entries (those without meta; an insight from a validated finding has its meta) already there and
 * writes nothing, and an entry the user's memory already holds (the same category and text, from any
 * turn) is not written again. An entry that looks like a credential is never written: whatever the
 * extractor's prompt says, a model may still copy a token the user pasted. Returns the entries written,
 * and the kinds of credential of those left out.
 */
export async function recordExtractedMemories(
  pool: Pool,
  { userId, turnId, entries }: { userId: string; turnId: string; entries: ExtractedMemory[] },
): Promise<{ written: ExtractedMemory[]; withheld: CredentialKind[] }> {
  const { kept, withheld } = withoutCredentials(entries, (entry) => [entry.text]);
  if (kept.length === 0) return { written: [], withheld };
  const written = await inTransaction(pool, async (client) => {
    const latest = await lockUserMemory(client, userId);
    const already = await client.query(
      `SELECT 1 FROM memory_entries
       WHERE user_id = $1 AND source_turn_id = $2 AND category = ANY($3::text[]) AND meta IS NULL LIMIT 1`,
      [userId, turnId, [...MEMORY_CATEGORIES]],
    );
    if (already.rowCount !== 0) return [];
    const remembered = await client.query<{ category: string; text: string }>(
      'SELECT category, text FROM memory_entries WHERE user_id = $1 AND category = ANY($2::text[])',
      [userId, [...MEMORY_CATEGORIES]],
    );
    const known = new Set(remembered.rows.map((row) => `${row.category}:${sameText(row.text)}`));
    const fresh = kept.filter((entry) => {
      const key = `${entry.category}:${sameText(entry.text)}`;
      if (known.has(key)) return false;
      known.add(key);
      return true;
    });
    await insertTurnEntries(
      client,
      { userId, turnId, latest },
      fresh.map(({ category, text, confidence }) => ({ category, text, confidence, meta: null })),
    );
    return fresh;
  });
  return { written, withheld };
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
 * the most recent entries in `scope`, at most 80, grouped by category, newest first in each group. Of a hypothesis
 * tested more than once, only the newest test's entries (its verdict, and its insight if it became one): an earlier
 * verdict is kept in memory but no longer read into a turn, so it neither contradicts the newest nor takes one
 * of the 80 places. '' when the user has no memory.
 */
export async function memorySummary(pool: Pool, userId: string, scope: MemoryReadScope = {}): Promise<string> {
  const { rows: entries } = await pool.query<SummaryEntry>(
    `SELECT category, text, created_at, meta FROM memory_entries m
     WHERE m.user_id = $1 AND NOT ${SUPERSEDED} AND ${keptBy('$3')}
     ORDER BY m.created_at DESC, m.id DESC LIMIT $2`,
    [userId, MEMORY_SUMMARY_LIMIT, labsParam(scope)],
  );
  return SUMMARY_SECTIONS.flatMap(({ category, title }) => {
    const lines = entries.filter((e) => e.category === category).map(summaryLine);
    return lines.length > 0 ? [`## ${title}\n${lines.join('\n')}`] : [];
  }).join('\n');
}
