/**
 * A turn's model calls as the `llm_calls` ledger recorded them, for `npm run bench:pacing`'s critical path.
 * The ledger keeps each call's end (`created_at`, on the worker's clock: when the call ended, not when its
 * row reached Postgres) and its duration (`duration_ms`, from the request to the end of the answer), so a
 * call's start is their difference. The worker runs on this machine, so its clock is the bench's.
 */
import type { Pool } from 'pg';

export interface LedgerCall {
  /** The call's id (contracts/steps.ts), e.g. `route`, `ds_plan`, `health_coach.main`. */
  step: string;
  model: string;
  attempt: number;
  outcome: string;
  /** When the call was sent and how long it lasted, paced answer included (epoch ms, ms). */
  startEpochMs: number;
  durationMs: number;
  costUsd: number;
  /** The prompt's length (`input_tokens`): what prompt caching could save on, had it a long stable prefix. */
  inputTokens?: number;
}

export async function readLedgerCalls(pool: Pool, turnId: string): Promise<LedgerCall[]> {
  const { rows } = await pool.query<{
    step: string;
    model: string;
    attempt: number;
    outcome: string;
    duration_ms: number;
    ended_ms: number;
    cost_usd: number;
    input_tokens: number;
  }>(
    `SELECT step, model, attempt, outcome, duration_ms, cost_usd::float8 AS cost_usd, input_tokens,
            (extract(epoch from created_at) * 1000)::float8 AS ended_ms
       FROM llm_calls WHERE turn_id = $1`,
    [turnId],
  );
  return rows
    .map((row) => ({
      step: row.step,
      model: row.model,
      attempt: row.attempt,
      outcome: row.outcome,
      startEpochMs: row.ended_ms - row.duration_ms,
      durationMs: row.duration_ms,
      costUsd: row.cost_usd,
      inputTokens: row.input_tokens,
    }))
    .sort((a, b) => a.startEpochMs - b.startEpochMs);
}
