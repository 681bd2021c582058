/**
 * Deleting an account everywhere (docs/api.md#deleting-an-account). The steps run in an order that makes a
 * retry after a failure finish the job, and that leaves nothing readable behind at any point:
 *
 * 1. revoke every API key but the caller's, so no new turn can start (the caller's goes with the user);
 * 2. delete the turns' workflow executions from Temporal (a running one is terminated with it);
 * 3. destroy the user's data keys, so a copy of a history Temporal kept elsewhere (an export, an archive,
 *    a backup) can no longer be decrypted;
 * 4. write the deletion record (counts and time, no personal data);
 * 5. delete the user row, and by cascade every row of theirs: turns and their events, idempotency keys,
 *    snapshots and cost ledger rows, memory, health data, API keys.
 */
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { Pool } from 'pg';
import type { AccountDeletion } from '../../contracts/account';
import { newId } from '../../platform/ids';
import { accountDeletedEvent, recordWebhookEvents } from '../../platform/webhooks/outbox';

export interface AccountDeletionDeps {
  pool: Pool;
  temporal: TemporalClient;
  keys: { destroyUserKeys(userId: string): Promise<number> };
}

/** What is kept, and why: the documented list (docs/api.md#deleting-an-account). */
const KEPT_AFTER_DELETION: AccountDeletion['kept'] = [
  {
    what: 'A deletion record: when, and how many rows of each kind were erased',
    why: 'To show that the deletion happened; it holds no user id, name, key or content.',
  },
];

/** Kept when a webhook endpoint subscribes to `account.deleted` (docs/webhooks.md#events). */
const KEPT_FOR_WEBHOOKS: AccountDeletion['kept'][number] = {
  what: 'An account.deleted webhook event: the account id and the deletion time, with its delivery records',
  why: "To tell the operator's backend, which erases its own copies; it holds no name, key or content.",
};

async function counts(pool: Pool, userId: string) {
  const { rows } = await pool.query<Record<string, number>>(
    `SELECT
       (SELECT count(*) FROM turns WHERE user_id = $1)::int AS turns,
       (SELECT count(*) FROM memory_entries WHERE user_id = $1)::int AS memory_entries,
       (SELECT count(*) FROM daily_summaries WHERE user_id = $1)::int AS daily_summaries,
       (SELECT count(*) FROM workouts WHERE user_id = $1)::int AS workouts,
       (SELECT count(*) FROM lab_biomarkers WHERE user_id = $1)::int AS lab_results,
       (SELECT count(*) FROM health_profiles WHERE user_id = $1)::int AS profile,
       (SELECT count(*) FROM api_keys WHERE user_id = $1)::int AS api_keys`,
    [userId],
  );
  return rows[0];
}

/** Deletes the turn's workflow execution; false when Temporal has none (already deleted, or expired). */
async function deleteExecution(temporal: TemporalClient, workflowId: string): Promise<boolean> {
  try {
    await temporal.workflowService.deleteWorkflowExecution({
      namespace: temporal.options.namespace,
      workflowExecution: { workflowId },
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return false;
    throw err;
  }
}

export async function deleteAccount(
  deps: AccountDeletionDeps,
  userId: string,
  callerKeyId: string | null,
): Promise<AccountDeletion> {
  const { pool, temporal } = deps;
  await pool.query(
    'UPDATE api_keys SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL AND id IS DISTINCT FROM $2',
    [userId, callerKeyId],
  );
  const before = await counts(pool, userId);
  const { rows: turns } = await pool.query<{ id: string }>('SELECT id FROM turns WHERE user_id = $1', [userId]);
  let executions = 0;
  for (const { id } of turns) if (await deleteExecution(temporal, id)) executions += 1;
  const dataKeys = await deps.keys.destroyUserKeys(userId);
  const deletion: AccountDeletion = {
    deleted_at: new Date().toISOString(),
    erased: {
      turns: before.turns,
      workflow_executions: executions,
      memory_entries: before.memory_entries,
      daily_summaries: before.daily_summaries,
      workouts: before.workouts,
      lab_results: before.lab_results,
      profile: before.profile,
      api_keys: before.api_keys,
      data_keys: dataKeys,
    },
    kept: KEPT_AFTER_DELETION,
  };
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO account_deletions (id, deleted_at, erased) VALUES ($1, $2, $3)', [
      newId('accountDeletion'),
      deletion.deleted_at,
      JSON.stringify(deletion.erased),
    ]);
    await client.query('DELETE FROM users WHERE id = $1', [userId]);
    // The backend's cue to erase its own copies; it commits with the deletion (platform/webhooks/outbox.ts).
    const announced = await recordWebhookEvents(client, [accountDeletedEvent(userId, new Date(deletion.deleted_at))]);
    if (announced > 0) deletion.kept = [...deletion.kept, KEPT_FOR_WEBHOOKS];
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
  return deletion;
}
