import type { Pool } from 'pg';
import { newId } from '../../platform/ids';
import { createUserWithApiKey } from '../../platform/users';

export async function createBenchUser(pool: Pool, role: string): Promise<{ userId: string; apiKey: string }> {
  const { user, apiKey } = await createUserWithApiKey(pool, `bench_${role}_${Date.now().toString(36)}`);
  return { userId: user.id, apiKey };
}

/**
 * Queued turns straight in Postgres (as test/support/fixtures.ts does): a stream to subscribe to with
 * no workflow behind it, so nothing but the benchmark appends to it. Bypasses the in-flight cap on
 * purpose; these turns never run.
 */
export async function insertQueuedTurns(pool: Pool, userId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId('turn'));
  await pool.query(
    // status is left to its default, 'queued'.
    `INSERT INTO turns (id, user_id, messages, context)
     SELECT id, $2, $3::jsonb, $4::jsonb FROM unnest($1::text[]) AS id`,
    [
      ids,
      userId,
      JSON.stringify([{ role: 'user', content: 'hi' }]),
      JSON.stringify({ include_memory: true, include_biomarkers: true }),
    ],
  );
  return ids;
}
