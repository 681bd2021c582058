/**
 * The memory service gives the API its view of `memory_entries` (docs/design.md#memory): pages behind an opaque
 * cursor, the user's own writes, and deletes that cannot tell another user's entry from a missing one.
 * The queries are platform/memory.ts's, shared with the worker's steps.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import {
  MAX_USER_MEMORY_ENTRIES,
  TESTED_HYPOTHESIS,
  memoryIdSchema,
  type CreateMemoryRequest,
  type ListMemoryQuery,
  type Memory,
  type MemoryList,
} from '../../contracts/memory';
import { isPostgresInstant } from '../../contracts/instant';
import { CREDENTIAL_DESCRIPTIONS } from '../../platform/credentials-in-text';
import { CredentialInMemoryError, createUserMemory, deleteMemory, listMemoryPage } from '../../platform/memory';
import { ApiError, notFound } from '../errors';

/** The position after the last entry of a page; opaque to clients (base64url JSON). */
const cursorSchema = z.tuple([z.iso.datetime().refine(isPostgresInstant), memoryIdSchema]);

function encodeCursor(last: Memory): string {
  return Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
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
  const [createdAt, id] = parsed.data;
  return { createdAt, id };
}

/** One page of the user's memory, newest first; tested hypotheses only when asked for. */
export async function listMemoryForUser(pool: Pool, userId: string, query: ListMemoryQuery): Promise<MemoryList> {
  const { entries, hasMore } = await listMemoryPage(pool, userId, {
    category: query.category,
    excludeCategory: query.include ? undefined : TESTED_HYPOTHESIS,
    after: query.after,
    before: query.before,
    position: query.cursor ? decodeCursor(query.cursor) : undefined,
    limit: query.limit,
  });
  return { data: entries, next_cursor: hasMore ? encodeCursor(entries[entries.length - 1]) : null, has_more: hasMore };
}

/**
 * A credential in an entry is refused (400 secret_detected) by what it looks like, naming the field: the message
 * never repeats the text, which is written nowhere, not in the answer, a log line or the database.
 */
function secretRefused(err: CredentialInMemoryError): ApiError {
  return new ApiError(
    'secret_detected',
    `${err.field}: looks like ${CREDENTIAL_DESCRIPTIONS[err.kind]}. Amy never remembers credentials (keys, tokens, passwords, card numbers); write the entry without it.`,
    err.field,
  );
}

/** A memory the user wrote themselves: no source turn. */
export async function createMemoryForUser(pool: Pool, userId: string, body: CreateMemoryRequest): Promise<Memory> {
  const created = await createUserMemory(pool, userId, body, { maxEntries: MAX_USER_MEMORY_ENTRIES }).catch(
    (err: unknown) => {
      throw err instanceof CredentialInMemoryError ? secretRefused(err) : err;
    },
  );
  if (created === null) {
    throw new ApiError(
      'memory_limit_reached',
      `This user already has ${MAX_USER_MEMORY_ENTRIES} memory entries written directly; delete some (DELETE /v1/memory/:id) before writing more.`,
    );
  }
  return created;
}

/** Another user's entry is indistinguishable from a missing one (404), as with turns. */
export async function deleteMemoryForUserOrThrow(pool: Pool, userId: string, memoryId: string): Promise<void> {
  if (!(await deleteMemory(pool, userId, memoryId))) throw notFound('Memory entry');
}
