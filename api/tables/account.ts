/**
 * Deleting an account everywhere (docs/api.md#deleting-an-account). The steps run in an order that makes a
 * retry after a failure finish the job, that leaves nothing readable behind at any point, and that no turn
 * started meanwhile escapes:
 *
 * 1. in one transaction, the user row locked: mark the account as being deleted and revoke every key of it,
 *    this request's included. No request is authenticated for the account from the commit on (but this
 *    deletion sent again, should it fail half-way: api/auth.ts), and no turn is created for it, even by a
 *    request authenticated just before (create_queued_turn takes the same lock, and refuses);
 * 2. delete the turns' workflow executions from Temporal, every run of a retried turn (`run_ids`) and the
 *    latest (a running one is terminated with it);
 * 3. destroy the user's data keys, so a copy of a history Temporal kept elsewhere (an export, an archive,
 *    a backup) can no longer be decrypted;
 * 4. sweep again for the turns whose workflow was not found: a streaming POST answers 201 before its workflow
 *    exists, so its start may land after step 2. This process waits for its own such starts; a start that
 *    lands later still, here or in another API process, finds no key to read its input with and no turn row,
 *    and the worker terminates its workflow (worker/turns-without-owner.ts);
 * 5. in one transaction: delete the webhook events that name the user (with their deliveries and attempts),
 *    write the deletion record (counts and time, no personal data), delete the user row, and by cascade
 *    every row of theirs (turns and their events, idempotency keys, snapshots and cost ledger rows, memory,
 *    health data, API keys), and record the `account.deleted` webhook event. The codec server's audit of operators'
 *    decodes is kept (who read a person's data outlives the data), and the answer says so when it names them.
 */
import { WorkflowNotFoundError, type Client as TemporalClient } from '@temporalio/client';
import type { Pool } from 'pg';
import type { AccountDeletion } from '../../contracts/account';
import { newId } from '../../platform/ids';
import { inTransaction } from '../../platform/pg-pool';
import { accountDeletedEvent, recordWebhookEvents } from '../../platform/webhooks/outbox';
import { settledWithin, type PendingTurnStarts } from '../temporal/pending-turn-starts';

export interface AccountDeletionDeps {
  pool: Pool;
  temporal: TemporalClient;
  keys: { destroyUserKeys(userId: string): Promise<number> };
  /** This process's turn starts still going after their POST was answered: the second sweep waits for them. */
  pendingStarts: Pick<PendingTurnStarts, 'of'>;
}

/** How long the second sweep waits for this process's starts of the account's turns. */
const PENDING_START_WAIT_MS = 10_000;

/** What is kept, and why: the documented list (docs/api.md#deleting-an-account). */
const KEPT_AFTER_DELETION: AccountDeletion['kept'] = [
  {
    what: 'A deletion record: when, and how many rows of each kind were erased',
    why: 'To show that the deletion happened; it holds no user id, name, key or content.',
  },
];

/** Kept when a webhook endpoint subscribes to `account.deleted` (docs/webhooks.md#events). */
const KEPT_FOR_WEBHOOKS: AccountDeletion['kept'][number] = {
  what: 'An account.deleted webhook event: the account id and the deletion time, with its delivery records (kept 30 days, as every webhook event)',
  why: "To tell the operator's backend, which erases its own copies; it holds no name, key or content.",
};

/** Kept when an operator decoded the account's workflow payloads (docs/operations.md#the-codec-server). */
const KEPT_FOR_AUDIT: AccountDeletion['kept'][number] = {
  what: "Audit records of operators' decodes of the account's workflow payloads: the operator, when, the workflow, data key and account ids (kept AMY_CODEC_AUDIT_RETENTION_DAYS, 365 days by default)",
  why: "Who read a person's data, and when, is a security record that must outlive the data; it holds no content.",
};

/**
 * The account's Terra events: its own, and those still waiting unmatched under its id or name, which the user
 * row's deletion would not reach (their connections, contributions and backfills go with the row).
 */
async function deleteTerraEventsOf(client: { query: Pool['query'] }, userId: string): Promise<number> {
  const { rowCount } = await client.query(
    `DELETE FROM terra_events WHERE user_id = $1
       OR (user_id IS NULL AND reference_id IN (SELECT u.id FROM users u WHERE u.id = $1 UNION SELECT u.name FROM users u WHERE u.id = $1))`,
    [userId],
  );
  return rowCount ?? 0;
}

/** Marks the account as being deleted and revokes every key of it, the user row locked (step 1). */
async function beginDeletion(pool: Pool, userId: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query('UPDATE users SET deleting_since = COALESCE(deleting_since, now()) WHERE id = $1', [userId]);
    // A key in a rotation's grace period (revoked_at in the future) stops now too.
    await client.query(
      `UPDATE api_keys SET revoked_at = LEAST(COALESCE(revoked_at, 'infinity'), now()) WHERE user_id = $1`,
      [userId],
    );
  });
}

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

const isNotFound = (err: unknown) => err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5;

/** The id of the turn's latest workflow run, which its row may have yet to learn of; null when Temporal has none. */
async function latestRunId(temporal: TemporalClient, workflowId: string): Promise<string | null> {
  try {
    const { workflowExecutionInfo } = await temporal.workflowService.describeWorkflowExecution({
      namespace: temporal.options.namespace,
      execution: { workflowId },
    });
    return workflowExecutionInfo?.execution?.runId ?? null;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/** Deletes one run of the turn's workflow (a running one is terminated first); false when Temporal has none. */
async function deleteRun(temporal: TemporalClient, workflowId: string, runId: string): Promise<boolean> {
  try {
    await temporal.workflowService.deleteWorkflowExecution({
      namespace: temporal.options.namespace,
      workflowExecution: { workflowId, runId },
    });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Deletes every run of each turn's workflow: the ones its row knows (a retried turn has several) and the latest,
 * which may be one its row has yet to learn of. Returns how many runs went, and the turns of which Temporal had
 * no run at all (their start may still be on its way).
 */
async function deleteWorkflowRuns(
  temporal: TemporalClient,
  turns: Array<{ id: string; run_ids: string[] }>,
): Promise<{ deleted: number; notFound: string[] }> {
  let deleted = 0;
  const notFound: string[] = [];
  for (const turn of turns) {
    const latest = await latestRunId(temporal, turn.id);
    let found = 0;
    for (const runId of new Set([...turn.run_ids, ...(latest ? [latest] : [])])) {
      if (await deleteRun(temporal, turn.id, runId)) found++;
    }
    if (found === 0) notFound.push(turn.id);
    deleted += found;
  }
  return { deleted, notFound };
}

/** Deletes the webhook events that name the user, with their deliveries and attempts (cascade); how many. */
async function deleteWebhookEventsOf(client: { query: Pool['query'] }, userId: string): Promise<number> {
  const { rowCount } = await client.query(`DELETE FROM webhook_events WHERE payload -> 'data' ->> 'user_id' = $1`, [
    userId,
  ]);
  return rowCount ?? 0;
}

export async function deleteAccount(deps: AccountDeletionDeps, userId: string): Promise<AccountDeletion> {
  const { pool, temporal } = deps;
  await beginDeletion(pool, userId);
  const before = await counts(pool, userId);
  const { rows: turns } = await pool.query<{ id: string; run_ids: string[] }>(
    'SELECT id, run_ids FROM turns WHERE user_id = $1',
    [userId],
  );
  const first = await deleteWorkflowRuns(temporal, turns);
  const dataKeys = await deps.keys.destroyUserKeys(userId);
  // Starts still going in this process; any other process's start that lands from now on is refused by the
  // worker (no key, then no row) and its workflow terminated.
  await settledWithin(Promise.all(first.notFound.map((id) => deps.pendingStarts.of(id))), PENDING_START_WAIT_MS);
  const second = await deleteWorkflowRuns(
    temporal,
    first.notFound.map((id) => ({ id, run_ids: [] })),
  );
  const deletion: AccountDeletion = {
    deleted_at: new Date().toISOString(),
    erased: {
      turns: before.turns,
      workflow_executions: first.deleted + second.deleted,
      memory_entries: before.memory_entries,
      daily_summaries: before.daily_summaries,
      workouts: before.workouts,
      lab_results: before.lab_results,
      profile: before.profile,
      api_keys: before.api_keys,
      data_keys: dataKeys,
      terra_events: 0,
      webhook_events: 0,
    },
    kept: KEPT_AFTER_DELETION,
  };
  await inTransaction(pool, async (client) => {
    deletion.erased.webhook_events = await deleteWebhookEventsOf(client, userId);
    deletion.erased.terra_events = await deleteTerraEventsOf(client, userId);
    await client.query('INSERT INTO account_deletions (id, deleted_at, erased) VALUES ($1, $2, $3)', [
      newId('accountDeletion'),
      deletion.deleted_at,
      JSON.stringify(deletion.erased),
    ]);
    await client.query('DELETE FROM users WHERE id = $1', [userId]);
    // The backend's cue to erase its own copies; it commits with the deletion (platform/webhooks/outbox.ts).
    const announced = await recordWebhookEvents(client, [accountDeletedEvent(userId, new Date(deletion.deleted_at))]);
    if (announced > 0) deletion.kept = [...deletion.kept, KEPT_FOR_WEBHOOKS];
    const audited = await client.query('SELECT 1 FROM codec_decode_audit WHERE $1 = ANY (user_ids) LIMIT 1', [userId]);
    if (audited.rowCount) deletion.kept = [...deletion.kept, KEPT_FOR_AUDIT];
  });
  return deletion;
}
