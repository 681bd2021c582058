/**
 * The cost caps at turn creation (docs/operations.md#cost-caps): a user who has reached a cap gets no new
 * turn until the window ends. Checked under the user's row lock with the rest of creation, after an
 * Idempotency-Key replay (the request already admitted is answered, cap or not) and before anything is
 * written: a refused request leaves no turn and starts no workflow.
 */
import type { Pool } from 'pg';
import { costCapReached, describeCostCapReached, type CostCapDefaults, type OwnCapRow } from '../../platform/cost-caps';
import { ApiError } from '../errors';

/**
 * Throws `429 cost_cap_exceeded`, with `Retry-After` the seconds until the cap's window ends. `ownCaps`: the
 * user's `user_cost_caps` rows, which turn creation reads with its other checks in one statement.
 */
export async function refuseTurnOverCostCap(
  db: Pick<Pool, 'query'>,
  userId: string,
  ownCaps: OwnCapRow[],
  defaults: CostCapDefaults,
  now = new Date(),
): Promise<void> {
  const reached = await costCapReached(db, userId, ownCaps, defaults, now);
  if (!reached) return;
  const retryAfterSeconds = Math.max(1, Math.ceil((reached.resetsAt.getTime() - now.getTime()) / 1000));
  throw new ApiError('cost_cap_exceeded', `${describeCostCapReached(reached)} No turn was created.`, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });
}
