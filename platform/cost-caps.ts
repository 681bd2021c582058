/**
 * Per-user cost caps (docs/operations.md#cost-caps): a hard ceiling on what a user's turns may spend on
 * the model in a UTC calendar day and a UTC calendar month. The `llm_calls` ledger is the source of
 * truth for spend: a call counts in the window in which it ended, failed attempts included.
 *
 * A user's cap for a window is their own (`user_cost_caps`, set with `npm run user:caps`), or else the
 * environment's default (AMY_USER_DAILY_CAP_USD / AMY_USER_MONTHLY_CAP_USD); a row with no amount
 * exempts the user from the default. A cap is reached when the window's spend is at or above it: the API
 * then refuses new turns, and the LLM layer refuses the next model call of a running turn, which fails
 * it. Calls already in flight finish, so spend can pass a cap by what they cost.
 */
import type { Pool } from 'pg';
import type { FailureType } from '../contracts/failure-types';
import { LlmError } from './llm/errors';
import { inTransaction } from './pg-pool';

export const COST_CAP_WINDOWS = ['daily', 'monthly'] as const;
export type CostCapWindow = (typeof COST_CAP_WINDOWS)[number];

/** The largest cap `llm_calls.cost_usd`'s precision (Decimal(12,6)) can hold in whole dollars. */
export const MAX_COST_CAP_USD = 999_999;

/** The environment's caps, applied to every user without caps of their own; null: no cap. */
export type CostCapDefaults = Record<CostCapWindow, number | null>;

export interface UserCostCap {
  /** USD; null: no cap in this window. */
  limitUsd: number | null;
  /** `user`: set for this user with `npm run user:caps`; `default`: the environment's. */
  source: 'user' | 'default';
}

export interface CapWindowSpan {
  start: Date;
  /** Exclusive: when the cap resets. */
  end: Date;
}

/** The UTC calendar day and month that hold `now`. */
export function costCapWindows(now: Date): Record<CostCapWindow, CapWindowSpan> {
  const [y, m, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  return {
    daily: { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) },
    monthly: { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) },
  };
}

/** The user's effective caps: their own where set, the defaults elsewhere. */
export async function userCostCaps(
  pool: Pick<Pool, 'query'>,
  userId: string,
  defaults: CostCapDefaults,
): Promise<Record<CostCapWindow, UserCostCap>> {
  return capsFrom(await ownCostCaps(pool, userId), defaults);
}

/** The user's `user_cost_caps` rows, for costCapReached. */
export async function ownCostCaps(pool: Pick<Pool, 'query'>, userId: string): Promise<OwnCapRow[]> {
  const { rows } = await pool.query<OwnCapRow>(
    'SELECT cap_window, limit_usd::text FROM user_cost_caps WHERE user_id = $1',
    [userId],
  );
  return rows;
}

/** A row of `user_cost_caps`: the user's own cap in one window (null: exempt from the default). */
export interface OwnCapRow {
  cap_window: CostCapWindow;
  limit_usd: string | null;
}

function capsFrom(rows: OwnCapRow[], defaults: CostCapDefaults): Record<CostCapWindow, UserCostCap> {
  const own = new Map(rows.map((row) => [row.cap_window, row.limit_usd === null ? null : Number(row.limit_usd)]));
  const capOf = (window: CostCapWindow): UserCostCap =>
    own.has(window)
      ? { limitUsd: own.get(window)!, source: 'user' }
      : { limitUsd: defaults[window], source: 'default' };
  return { daily: capOf('daily'), monthly: capOf('monthly') };
}

/** A change to a user's own cap: an amount in USD, `none` (no cap, whatever the default), or `default`. */
export type CostCapChange = number | 'none' | 'default';

/** Applies the changes to the user's own caps in one transaction: a command sets both windows or neither. */
export async function changeUserCostCaps(
  pool: Pool,
  userId: string,
  changes: Partial<Record<CostCapWindow, CostCapChange>>,
): Promise<void> {
  await inTransaction(pool, async (client) => {
    for (const window of COST_CAP_WINDOWS) {
      const change = changes[window];
      if (change === undefined) continue;
      if (change === 'default') {
        await client.query('DELETE FROM user_cost_caps WHERE user_id = $1 AND cap_window = $2', [userId, window]);
        continue;
      }
      await client.query(
        `INSERT INTO user_cost_caps (user_id, cap_window, limit_usd) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, cap_window) DO UPDATE SET limit_usd = EXCLUDED.limit_usd, updated_at = now()`,
        [userId, window, change === 'none' ? null : change],
      );
    }
  });
}

/** What the user's turns have spent in the day and the month that hold `now`, from the ledger. */
export async function userSpendUsd(
  pool: Pick<Pool, 'query'>,
  userId: string,
  now: Date,
): Promise<Record<CostCapWindow, number>> {
  const windows = costCapWindows(now);
  const { rows } = await pool.query<{ daily: string; monthly: string }>(
    `SELECT COALESCE(SUM(c.cost_usd) FILTER (WHERE c.created_at >= $2), 0)::text AS daily,
            COALESCE(SUM(c.cost_usd), 0)::text AS monthly
     FROM llm_calls c JOIN turns t ON t.id = c.turn_id
     WHERE t.user_id = $1 AND c.created_at >= $3`,
    [userId, windows.daily.start, windows.monthly.start],
  );
  return { daily: Number(rows[0].daily), monthly: Number(rows[0].monthly) };
}

export interface CostCapReached {
  window: CostCapWindow;
  limitUsd: number;
  spentUsd: number;
  /** When the window ends, and with it the cap. */
  resetsAt: Date;
}

/**
 * The cap the user has reached, or null, given the user's own caps (their `user_cost_caps` rows, which the
 * caller reads: ownCostCaps, or joined with what else it reads). With both reached, the monthly one: nothing
 * can run before the month ends, so that is when a client should come back.
 */
export async function costCapReached(
  pool: Pick<Pool, 'query'>,
  userId: string,
  ownCaps: OwnCapRow[],
  defaults: CostCapDefaults,
  now: Date,
): Promise<CostCapReached | null> {
  const caps = capsFrom(ownCaps, defaults);
  // Most users have no cap at all: no need to add up their spend.
  if (COST_CAP_WINDOWS.every((window) => caps[window].limitUsd === null)) return null;
  const spent = await userSpendUsd(pool, userId, now);
  const windows = costCapWindows(now);
  let reached: CostCapReached | null = null;
  for (const window of COST_CAP_WINDOWS) {
    const limitUsd = caps[window].limitUsd;
    if (limitUsd !== null && spent[window] >= limitUsd) {
      reached = { window, limitUsd, spentUsd: spent[window], resetsAt: windows[window].end };
    }
  }
  return reached;
}

const usd = (amount: number) => `$${Number(amount.toFixed(6))}`;

/** One sentence for an error message: which cap, how much was spent, when it resets. No health data. */
export function describeCostCapReached({ window, limitUsd, spentUsd, resetsAt }: CostCapReached): string {
  const period = window === 'daily' ? 'today (UTC)' : 'this month (UTC)';
  return `The ${window} cost cap of ${usd(limitUsd)} is reached: ${usd(spentUsd)} spent ${period}; it resets at ${resetsAt.toISOString()}.`;
}

/**
 * A running turn's next model call, refused because its user reached a cost cap. The turn fails with
 * `cost_cap_exceeded` (never retried: the cap holds until its window ends).
 */
export class CostCapExceededError extends LlmError {
  override name: FailureType = 'CostCapExceededError';
}

/** Called before each model call of a turn: throws CostCapExceededError once the turn's user reached a cap. */
export type CostCapGuard = (turnId: string) => Promise<void>;

export function createCostCapGuard(deps: {
  pool: Pick<Pool, 'query'>;
  defaults: CostCapDefaults;
  clock: () => Date;
}): CostCapGuard {
  const { pool } = deps;
  return async (turnId) => {
    // The turn's user and their own caps in one statement: this runs before every model call. A user without
    // caps of their own comes back as one row with no window.
    const { rows } = await pool.query<{ user_id: string; cap_window: CostCapWindow | null; limit_usd: string | null }>(
      `SELECT t.user_id, c.cap_window, c.limit_usd::text
       FROM turns t LEFT JOIN user_cost_caps c ON c.user_id = t.user_id WHERE t.id = $1`,
      [turnId],
    );
    // A turn without a row fails elsewhere (TurnNotFoundError), not here.
    if (!rows[0]) return;
    const own = rows.flatMap(({ cap_window, limit_usd }) => (cap_window ? [{ cap_window, limit_usd }] : []));
    const reached = await costCapReached(pool, rows[0].user_id, own, deps.defaults, deps.clock());
    if (!reached) return;
    const cost = await pool.query<{ total: string }>(
      'SELECT COALESCE(SUM(cost_usd), 0)::text AS total FROM llm_calls WHERE turn_id = $1',
      [turnId],
    );
    throw new CostCapExceededError(
      `${describeCostCapReached(reached)} The turn stopped after spending ${usd(Number(cost.rows[0].total))}.`,
    );
  };
}

/** The defaults as configuration holds them (platform/config.ts). */
export const costCapDefaults = (config: {
  AMY_USER_DAILY_CAP_USD?: number;
  AMY_USER_MONTHLY_CAP_USD?: number;
}): CostCapDefaults => ({
  daily: config.AMY_USER_DAILY_CAP_USD ?? null,
  monthly: config.AMY_USER_MONTHLY_CAP_USD ?? null,
});
