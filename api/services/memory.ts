/**
 * The memory service owns `memory_entries` for the API (seed 004): a user's pages of memory, their
 * own writes and hard deletes, every query scoped to the owner.
 *
 * `created_at` is a timestamp without time zone holding UTC (Prisma's convention, which the worker's
 * writes follow). Instants therefore cross the SQL boundary as UTC text, never as JS Dates, which
 * node-pg would shift by the process's time zone.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import { newId } from '../../platform/ids';
import {
  TESTED_HYPOTHESIS,
  memoryIdSchema,
  type CreateMemoryRequest,
  type ListMemoryQuery,
  type Memory,
  type MemoryList,
} from '../../contracts/memory';
import { ApiError, notFound } from '../errors';

const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const MEMORY_COLUMNS = `id, text, category, to_char(created_at, ${UTC_ISO}) AS created_at, source_turn_id, confidence, meta`;
/** An ISO-8601 instant parameter as the UTC wall time `created_at` is stored in. */
const utcParam = (n: number) => `($${n}::timestamptz AT TIME ZONE 'UTC')`;

/** The position after the last entry of a page; opaque to clients (base64url JSON). */
const cursorSchema = z.tuple([z.iso.datetime(), memoryIdSchema]);

function encodeCursor(last: Memory): string {
  return Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url');
}

function decodeCursor(cursor: string): [createdAt: string, id: string] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const parsed = cursorSchema.safeParse(decoded);
  if (!parsed.success) {
    throw new ApiError('invalid_field', 'cursor: not a next_cursor this API returned.', 'cursor');
  }
  return parsed.data;
}

/**
 * One page of the user's memory, newest first by created_at then id, so pages neither repeat nor
 * skip an entry even when several share a millisecond.
 */
export async function listMemoryForUser(pool: Pool, userId: string, query: ListMemoryQuery): Promise<MemoryList> {
  const params: unknown[] = [userId];
  const param = (value: unknown) => params.push(value);
  const where = ['user_id = $1'];
  if (query.category) where.push(`category = $${param(query.category)}`);
  else if (!query.include) where.push(`category <> $${param(TESTED_HYPOTHESIS)}`);
  if (query.after) where.push(`created_at > ${utcParam(param(query.after))}`);
  if (query.before) where.push(`created_at < ${utcParam(param(query.before))}`);
  if (query.cursor) {
    const [createdAt, id] = decodeCursor(query.cursor);
    where.push(`(created_at, id) < (${utcParam(param(createdAt))}, $${param(id)})`);
  }
  const { rows } = await pool.query<Memory>(
    `SELECT ${MEMORY_COLUMNS} FROM memory_entries WHERE ${where.join(' AND ')}
     ORDER BY created_at DESC, id DESC LIMIT $${param(query.limit + 1)}`,
    params,
  );
  const hasMore = rows.length > query.limit;
  const data = rows.slice(0, query.limit);
  return { data, next_cursor: hasMore ? encodeCursor(data[data.length - 1]) : null, has_more: hasMore };
}

/** A memory the user wrote themselves: no source turn. */
export async function createMemoryForUser(pool: Pool, userId: string, body: CreateMemoryRequest): Promise<Memory> {
  const { rows } = await pool.query<Memory>(
    `INSERT INTO memory_entries (id, user_id, category, text, confidence, source_turn_id, meta, created_at)
     VALUES ($1, $2, $3, $4, $5, NULL, $6, now() AT TIME ZONE 'UTC')
     RETURNING ${MEMORY_COLUMNS}`,
    [
      newId('memory'),
      userId,
      body.category,
      body.text,
      body.confidence,
      body.meta === null ? null : JSON.stringify(body.meta),
    ],
  );
  return rows[0];
}

/** Another user's entry is indistinguishable from a missing one (404), as with turns. */
export async function deleteMemoryForUserOrThrow(pool: Pool, userId: string, memoryId: string): Promise<void> {
  const { rowCount } = await pool.query('DELETE FROM memory_entries WHERE id = $1 AND user_id = $2', [
    memoryId,
    userId,
  ]);
  if (rowCount === 0) throw notFound('Memory entry');
}
