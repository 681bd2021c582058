import { Router } from 'express';
import type { Pool } from 'pg';
import type { Client as TemporalClient } from '@temporalio/client';
import type { DataKeyStore } from '../../platform/crypto/data-keys';
import { deleteAccount } from '../tables/account';
import type { PendingTurnStarts } from '../temporal/pending-turn-starts';

export interface AccountRoutesDeps {
  pool: Pool;
  temporal: TemporalClient;
  /** The data keys the account's workflow payloads are encrypted under, destroyed with it. */
  keys: Pick<DataKeyStore, 'destroyUserKeys'>;
  /** This process's turn starts still going: the deletion waits for the account's before its second sweep. */
  pendingStarts: Pick<PendingTurnStarts, 'of'>;
}

export function accountRoutes(deps: AccountRoutesDeps): Router {
  const router = Router();
  router.delete('/v1/account', async (_req, res) => {
    const userId = res.locals.userId as string;
    res.json(await deleteAccount(deps, userId));
  });
  return router;
}
