/**
 * The cost caps at turn creation (docs/operations.md#cost-caps): a user who has reached a cap gets no new
 * turn until the window ends. Decided before creation takes the user's row lock, and applied by it after an
 * Idempotency-Key replay (the request already admitted is answered, cap or not) and before anything is
 * written: a refused request leaves no turn and starts no workflow.
 */
import type { Pool } from 'pg';
import {
  costCapReached,
  describeCostCapReached,
  ownCostCaps,
  type CostCapDefaults,
  type CostCapReached,
} from '../../platform/cost-caps';
import { ApiError } from '../errors';

/**
 * The cap the user has reached at `now`, or null: their own caps, then, only when some cap applies to them,
 * their spend (one statement without caps, two with). Read outside the user's row lock, which loses nothing:
 * the spend is written by the worker as model calls end, never under that lock, so the lock did not make
 * this check exact either. Calls in flight can pass a cap by what they cost, as platform/cost-caps.ts says.
 */
export async function turnCostCapReached(
  db: Pick<Pool, 'query'>,
  userId: string,
  defaults: CostCapDefaults,
  now: Date,
): Promise<CostCapReached | null> {
  return costCapReached(db, userId, await ownCostCaps(db, userId), defaults, now);
}

/** Throws `429 cost_cap_exceeded`, with `Retry-After` the seconds from `now` until the cap's window ends. */
export function refuseTurnOverCostCap(reached: CostCapReached, now: Date): never {
  const retryAfterSeconds = Math.max(1, Math.ceil((reached.resetsAt.getTime() - now.getTime()) / 1000));
  throw new ApiError('cost_cap_exceeded', `${describeCostCapReached(reached)} No turn was created.`, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });
}
