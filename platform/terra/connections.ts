/**
 * The providers each user connected through Terra (docs/terra.md#connections): one row per Terra user (a user's
 * connection to one provider), kept by the connection events. The newest event wins (by Terra's ordering timestamp, else
 * by receipt), whatever order they arrive or are ingested in: an older event never takes a connection back.
 */
import type { PoolClient } from 'pg';
import type { Pool } from 'pg';
import type { TerraConnectionStatus } from '../../contracts/data';
import type { TerraUser } from './events';

/** The status each connection event leaves its connection in. */
const STATUS_AFTER: Record<string, TerraConnectionStatus> = {
  auth: 'connected',
  user_reauth: 'connected',
  permission_change: 'connected',
  deauth: 'disconnected',
  access_revoked: 'revoked',
  connection_error: 'error',
};

export interface TerraConnectionChange {
  terraUserId: string | null;
  provider: string | null;
  status: TerraConnectionStatus | 'auth_failed' | 'replaced';
  previousStatus: TerraConnectionStatus | null;
}

export interface TerraConnectionRow {
  terra_user_id: string;
  provider: string;
  status: TerraConnectionStatus;
  scopes: string[];
  connected_at: string | null;
  updated_at: string;
}

/**
 * Applies one connection event of `userId`'s, ordered at `orderedAt`. Returns the changes the backend is told
 * of; none when a newer event already set the connection.
 */
export async function applyConnectionEvent(
  client: PoolClient,
  userId: string,
  event: { type: string; user: TerraUser | null; replaced: TerraUser | null; orderedAt: Date },
): Promise<TerraConnectionChange[]> {
  if (event.type === 'auth_cancelled') {
    // Nothing was connected: there is no Terra user, only a failed attempt the backend may want to follow up.
    return [{ terraUserId: null, provider: null, status: 'auth_failed', previousStatus: null }];
  }
  const changes: TerraConnectionChange[] = [];
  if (event.replaced && event.replaced.user_id !== event.user?.user_id) {
    const { rows } = await client.query<{ status: TerraConnectionStatus }>(
      'DELETE FROM terra_connections WHERE terra_user_id = $1 AND user_id = $2 RETURNING status',
      [event.replaced.user_id, userId],
    );
    if (rows[0]) {
      changes.push({
        terraUserId: event.replaced.user_id,
        provider: event.replaced.provider,
        status: 'replaced',
        previousStatus: rows[0].status,
      });
    }
  }
  const status = STATUS_AFTER[event.type];
  if (!status || !event.user) return changes;
  const previous = await client.query<{ status: TerraConnectionStatus }>(
    'SELECT status FROM terra_connections WHERE terra_user_id = $1',
    [event.user.user_id],
  );
  const written = await client.query(
    `INSERT INTO terra_connections
       (terra_user_id, user_id, provider, status, scopes, last_event, state_at, connected_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $4 = 'connected' THEN $7::timestamptz END, now())
     ON CONFLICT (terra_user_id) DO UPDATE SET
       status = EXCLUDED.status, scopes = COALESCE(EXCLUDED.scopes, terra_connections.scopes),
       provider = EXCLUDED.provider, last_event = EXCLUDED.last_event, state_at = EXCLUDED.state_at,
       connected_at = COALESCE(terra_connections.connected_at, EXCLUDED.connected_at), updated_at = now()
     WHERE terra_connections.state_at <= EXCLUDED.state_at AND terra_connections.user_id = EXCLUDED.user_id`,
    [event.user.user_id, userId, event.user.provider, status, event.user.scopes ?? null, event.type, event.orderedAt],
  );
  const previousStatus = previous.rows[0]?.status ?? null;
  if ((written.rowCount ?? 0) > 0 && (previousStatus !== status || event.type === 'permission_change')) {
    changes.push({ terraUserId: event.user.user_id, provider: event.user.provider, status, previousStatus });
  }
  return changes;
}

/** The Amy user a Terra user is connected for, if any. */
export async function userOfTerraUser(client: Pick<PoolClient, 'query'>, terraUserId: string): Promise<string | null> {
  const { rows } = await client.query<{ user_id: string }>(
    'SELECT user_id FROM terra_connections WHERE terra_user_id = $1',
    [terraUserId],
  );
  return rows[0]?.user_id ?? null;
}

/** A user's connections, by provider then Terra user id. */
export async function listTerraConnections(pool: Pool, userId: string): Promise<TerraConnectionRow[]> {
  const { rows } = await pool.query<{
    terra_user_id: string;
    provider: string;
    status: TerraConnectionStatus;
    scopes: string | null;
    connected_at: Date | null;
    updated_at: Date;
  }>(
    `SELECT terra_user_id, provider, status, scopes, connected_at, updated_at FROM terra_connections
     WHERE user_id = $1 ORDER BY provider, terra_user_id`,
    [userId],
  );
  return rows.map((row) => ({
    terra_user_id: row.terra_user_id,
    provider: row.provider,
    status: row.status,
    scopes: row.scopes ? row.scopes.split(',').filter(Boolean) : [],
    connected_at: row.connected_at?.toISOString() ?? null,
    updated_at: row.updated_at.toISOString(),
  }));
}
