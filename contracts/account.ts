/**
 * DELETE /v1/account (docs/api.md#deleting-an-account): what was erased, and what is kept and why.
 */
import { z } from 'zod';

const count = z.number().int().nonnegative();

export const accountDeletionSchema = z
  .object({
    deleted_at: z.string().describe('When the account was deleted (ISO 8601).'),
    erased: z
      .object({
        turns: count.describe('Turns, with their event logs, idempotency keys, data snapshots and cost ledger rows.'),
        workflow_executions: count.describe(
          "The turns' workflow executions deleted from Temporal, every run of a retried turn (running ones are terminated).",
        ),
        memory_entries: count,
        daily_summaries: count,
        workouts: count,
        lab_results: count,
        profile: count.describe('1 when a profile was stored.'),
        api_keys: count.describe("Every key of the account, revoked and deleted (this request's key included)."),
        data_keys: count.describe(
          "The account's data keys, destroyed: any copy of its workflow histories (exports, archives, backups) can no longer be decrypted.",
        ),
        terra_events: count.describe(
          'Events Terra delivered for the account, kept for replay (docs/terra.md), with its provider connections and what each provider sent.',
        ),
        webhook_events: count.describe(
          'Webhook events that named the account (turn.completed, memory.created, …), with their deliveries and attempts.',
        ),
      })
      .strict(),
    kept: z
      .array(z.object({ what: z.string(), why: z.string() }).strict())
      .describe('What the service keeps after the deletion, each with the reason; none of it is personal data.'),
  })
  .strict();
export type AccountDeletion = z.infer<typeof accountDeletionSchema>;
