/**
 * Webhook endpoints (docs/webhooks.md#endpoints), as the operator's commands manage them (scripts/webhooks.ts) and
 * the delivery activity reads them. A secret leaves this module only as the `whsec_…` string a new endpoint or a
 * rotation returns once, and as the signing secrets handed to the delivery activity.
 */
import type { Pool } from 'pg';
import { WEBHOOK_EVENT_TYPES, isWebhookEventType, type WebhookEventType } from '../../contracts/webhooks';
import type { MasterKeyring } from '../crypto/master-key';
import { newId } from '../ids';
import { inTransaction } from '../pg-pool';
import { checkWebhookUrl, resolveWebhookAddress, type AddressPolicy } from './address-check';
import { newWebhookSecret, openWebhookSecret, sealWebhookSecret } from './secrets';

/** The events an endpoint receives when `--events` is not given: a turn's end, the issue's first use. */
export const DEFAULT_EVENT_TYPES: WebhookEventType[] = ['turn.completed', 'turn.failed', 'turn.cancelled'];

export class UnknownWebhookEndpointError extends Error {
  override name = 'UnknownWebhookEndpointError';
}

export class UnknownWebhookEventTypeError extends Error {
  override name = 'UnknownWebhookEventTypeError';
}

export interface WebhookEndpointSummary {
  id: string;
  url: string;
  event_types: string[];
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** Until when the previous secret still signs (a rotation's grace period), null when it does not. */
  previous_secret_expires_at: Date | null;
}

const SUMMARY_COLUMNS =
  'id, url, event_types, created_at, disabled_at, disabled_reason, ' +
  'CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at';

export function parseEventTypes(list: string): WebhookEventType[] {
  const types = [
    ...new Set(
      list
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = types.filter((t) => !isWebhookEventType(t));
  if (unknown.length > 0 || types.length === 0) {
    throw new UnknownWebhookEventTypeError(
      `${unknown.length ? `unknown event type ${unknown.join(', ')}` : 'no event type'}: choose among ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  }
  return types as WebhookEventType[];
}

/** Registers an endpoint after checking its URL and where its host resolves now; returns it and its secret. */
export async function addWebhookEndpoint(
  pool: Pool,
  keyring: MasterKeyring,
  policy: AddressPolicy,
  input: { url: string; eventTypes: WebhookEventType[] },
): Promise<{ endpoint: WebhookEndpointSummary; secret: string }> {
  const url = checkWebhookUrl(input.url, policy);
  await resolveWebhookAddress(url, policy);
  const id = newId('webhookEndpoint');
  const secret = newWebhookSecret();
  const sealed = sealWebhookSecret(secret, id, 'current', keyring.current);
  const { rows } = await pool.query<WebhookEndpointSummary>(
    `INSERT INTO webhook_endpoints (id, url, event_types, sealed_secret, secret_master_key_id)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${SUMMARY_COLUMNS}`,
    [id, url.toString(), input.eventTypes, sealed.sealed, sealed.masterKeyId],
  );
  return { endpoint: rows[0], secret };
}

export async function listWebhookEndpoints(pool: Pool): Promise<WebhookEndpointSummary[]> {
  const { rows } = await pool.query<WebhookEndpointSummary>(
    `SELECT ${SUMMARY_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
  );
  return rows;
}

/** Deletes the endpoint and its deliveries' records; its pending deliveries stop before their next attempt. */
export async function removeWebhookEndpoint(pool: Pool, id: string): Promise<void> {
  const { rowCount } = await pool.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
  if (rowCount === 0) throw new UnknownWebhookEndpointError(`no webhook endpoint ${id} (npm run webhooks:list)`);
}

/**
 * A new secret for the endpoint, which signs from now on; the one it replaces also signs, alongside, for
 * `graceSeconds` (0: it stops at once), so receivers can switch without refusing a delivery.
 */
export async function rotateWebhookSecret(
  pool: Pool,
  keyring: MasterKeyring,
  id: string,
  graceSeconds: number,
): Promise<{ secret: string; previousExpiresAt: Date | null }> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ sealed_secret: Buffer; secret_master_key_id: string }>(
      'SELECT sealed_secret, secret_master_key_id FROM webhook_endpoints WHERE id = $1 FOR UPDATE',
      [id],
    );
    if (rows.length === 0) throw new UnknownWebhookEndpointError(`no webhook endpoint ${id} (npm run webhooks:list)`);
    const old = openWebhookSecret(
      { sealed: rows[0].sealed_secret, masterKeyId: rows[0].secret_master_key_id },
      id,
      'current',
      keyring,
    );
    const secret = newWebhookSecret();
    const current = sealWebhookSecret(secret, id, 'current', keyring.current);
    const previous = graceSeconds > 0 ? sealWebhookSecret(old, id, 'previous', keyring.current) : null;
    const updated = await client.query<{ previous_secret_expires_at: Date | null }>(
      `UPDATE webhook_endpoints SET sealed_secret = $2, secret_master_key_id = $3,
         previous_sealed_secret = $4, previous_secret_master_key_id = $5,
         previous_secret_expires_at = CASE WHEN $4::bytea IS NULL THEN NULL ELSE now() + make_interval(secs => $6) END
       WHERE id = $1 RETURNING previous_secret_expires_at`,
      [id, current.sealed, current.masterKeyId, previous?.sealed ?? null, previous?.masterKeyId ?? null, graceSeconds],
    );
    return { secret, previousExpiresAt: updated.rows[0].previous_secret_expires_at };
  });
}

/** What an attempt needs of its endpoint, secrets opened: the current one first, then the previous in its grace. */
export interface EndpointForDelivery {
  id: string;
  url: string;
  disabled: boolean;
  secrets: string[];
}

export async function endpointForDelivery(
  pool: Pool,
  keyring: MasterKeyring,
  id: string,
): Promise<EndpointForDelivery | null> {
  const { rows } = await pool.query<{
    url: string;
    disabled_at: Date | null;
    sealed_secret: Buffer;
    secret_master_key_id: string;
    previous_sealed_secret: Buffer | null;
    previous_secret_master_key_id: string | null;
  }>(
    `SELECT url, disabled_at, sealed_secret, secret_master_key_id,
       CASE WHEN previous_secret_expires_at > now() THEN previous_sealed_secret END AS previous_sealed_secret,
       previous_secret_master_key_id
     FROM webhook_endpoints WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  const secrets = [
    openWebhookSecret({ sealed: row.sealed_secret, masterKeyId: row.secret_master_key_id }, id, 'current', keyring),
  ];
  if (row.previous_sealed_secret && row.previous_secret_master_key_id) {
    secrets.push(
      openWebhookSecret(
        { sealed: row.previous_sealed_secret, masterKeyId: row.previous_secret_master_key_id },
        id,
        'previous',
        keyring,
      ),
    );
  }
  return { id, url: row.url, disabled: row.disabled_at !== null, secrets };
}

/** A receiver answered 410 Gone: the endpoint is disabled, and so are its pending deliveries. */
export async function disableWebhookEndpoint(pool: Pool, id: string, reason: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(
      'UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = $2 WHERE id = $1 AND disabled_at IS NULL',
      [id, reason],
    );
    await client.query(
      `UPDATE webhook_deliveries SET status = 'disabled', finished_at = now() WHERE endpoint_id = $1 AND status = 'pending'`,
      [id],
    );
  });
}

/** Re-seals every endpoint's secrets under `next` (`npm run key:rotate-master`), in one transaction. Returns how many. */
export async function resealWebhookSecrets(
  pool: Pool,
  keyring: MasterKeyring,
  next: { id: string; key: Buffer },
): Promise<number> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{
      id: string;
      sealed_secret: Buffer;
      secret_master_key_id: string;
      previous_sealed_secret: Buffer | null;
      previous_secret_master_key_id: string | null;
    }>(
      `SELECT id, sealed_secret, secret_master_key_id, previous_sealed_secret, previous_secret_master_key_id
       FROM webhook_endpoints ORDER BY id FOR UPDATE`,
    );
    for (const row of rows) {
      const current = sealWebhookSecret(
        openWebhookSecret(
          { sealed: row.sealed_secret, masterKeyId: row.secret_master_key_id },
          row.id,
          'current',
          keyring,
        ),
        row.id,
        'current',
        next,
      );
      const previous =
        row.previous_sealed_secret && row.previous_secret_master_key_id
          ? sealWebhookSecret(
              openWebhookSecret(
                { sealed: row.previous_sealed_secret, masterKeyId: row.previous_secret_master_key_id },
                row.id,
                'previous',
                keyring,
              ),
              row.id,
              'previous',
              next,
            )
          : null;
      await client.query(
        `UPDATE webhook_endpoints SET sealed_secret = $2, secret_master_key_id = $3,
           previous_sealed_secret = $4, previous_secret_master_key_id = $5 WHERE id = $1`,
        [row.id, current.sealed, current.masterKeyId, previous?.sealed ?? null, previous?.masterKeyId ?? null],
      );
    }
    return rows.length;
  });
}
