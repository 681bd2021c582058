/**
 * The Terra inbox (docs/terra.md#what-happens-to-an-event): every event that passed its signature check, kept as
 * it arrived so that ingestion can run now and again later (`npm run terra:replay`). The body is health data, so it
 * is sealed by the master key (AES-256-GCM, iv | ciphertext | tag, the event's id as additional data, so a sealed
 * body copied to another row does not open); only what the event is and whose stays in the clear.
 *
 * One event is one row: a redelivery (Terra retries anything but a 2xx) has the same dedupe key — a lab report's
 * `event_id`, otherwise the `terra-reference` header and the body's SHA-256 — and adds nothing. Ingestion is an
 * upsert too, so even a body Terra sends again under a new reference changes no row twice.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { MasterKeyring } from '../crypto/master-key';
import { newId } from '../ids';
import type { TerraEventIdentity } from './events';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD_LABEL = 'amy terra event v1';

/** How long a stored event is kept for replay, in days. */
const TERRA_EVENT_RETENTION_DAYS = 30;
/** How long an event that matches no Amy user waits for one to appear, in days. */
const TERRA_UNMATCHED_RETENTION_DAYS = 7;

export type TerraEventStatus = 'received' | 'applied' | 'unmatched' | 'refused';

/** A body that does not open: its master key is not in this process's ring, or the row was altered. */
export class TerraEventSealError extends Error {
  override name = 'TerraEventSealError';
}

const additionalData = (eventId: string) => Buffer.from(`${AAD_LABEL}\0${eventId}`);

function sealTerraBody(body: Buffer, eventId: string, keyring: MasterKeyring): { sealed: Buffer; masterKeyId: string } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  cipher.setAAD(additionalData(eventId));
  return {
    sealed: Buffer.concat([iv, cipher.update(body), cipher.final(), cipher.getAuthTag()]),
    masterKeyId: keyring.current.id,
  };
}

function openTerraBody(
  stored: { sealed: Buffer; masterKeyId: string },
  eventId: string,
  keyring: MasterKeyring,
): Buffer {
  const key = keyring.byId(stored.masterKeyId);
  if (!key) {
    throw new TerraEventSealError(
      `Terra event ${eventId} is sealed under master key ${stored.masterKeyId}, which this process does not hold: ` +
        'give it the old key in AMY_MASTER_KEY_PREVIOUS (docs/operations.md#keys)',
    );
  }
  const { sealed } = stored;
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new TerraEventSealError(`Terra event ${eventId} is malformed`);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(additionalData(eventId));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new TerraEventSealError(`Terra event ${eventId} does not open under master key ${stored.masterKeyId}`);
  }
}

/** What makes a redelivery the same event. */
function terraDedupeKey(identity: TerraEventIdentity, terraReference: string | null, body: Buffer): string {
  if (identity.eventId) return `event:${identity.eventId}`;
  const digest = createHash('sha256').update(body).digest('hex');
  return `body:${terraReference ?? ''}:${digest}`;
}

/** Stores an event unless it is already stored; returns its id and whether this call stored it. */
export async function storeTerraEvent(
  pool: Pool,
  keyring: MasterKeyring,
  event: { identity: TerraEventIdentity; terraReference: string | null; orderedAt: Date | null; body: Buffer },
): Promise<{ id: string; duplicate: boolean }> {
  const id = newId('terraEvent');
  const { identity, terraReference, orderedAt, body } = event;
  const { sealed, masterKeyId } = sealTerraBody(body, id, keyring);
  const dedupeKey = terraDedupeKey(identity, terraReference, body);
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO terra_events
       (id, dedupe_key, type, terra_reference, terra_user_id, provider, reference_id, sealed_body, master_key_id,
        ordered_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, COALESCE($10, now()))
     ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
    [
      id,
      dedupeKey,
      identity.type,
      terraReference,
      identity.terraUserId,
      identity.provider,
      identity.referenceId,
      sealed,
      masterKeyId,
      orderedAt,
    ],
  );
  if (rows[0]) return { id, duplicate: false };
  const existing = await pool.query<{ id: string }>('SELECT id FROM terra_events WHERE dedupe_key = $1', [dedupeKey]);
  return { id: existing.rows[0]?.id ?? id, duplicate: true };
}

export interface StoredTerraEvent {
  id: string;
  type: string;
  terraReference: string | null;
  terraUserId: string | null;
  provider: string | null;
  referenceId: string | null;
  userId: string | null;
  status: TerraEventStatus;
  receivedAt: Date;
  orderedAt: Date;
  appliedAt: Date | null;
  body: Buffer;
}

/** An event with its body opened, locked for the caller's transaction; null when it is gone (retention, deletion). */
export async function lockTerraEvent(
  client: PoolClient,
  keyring: MasterKeyring,
  id: string,
): Promise<StoredTerraEvent | null> {
  const { rows } = await client.query(
    `SELECT id, type, terra_reference, terra_user_id, provider, reference_id, user_id, status, received_at, ordered_at, applied_at,
            sealed_body, master_key_id
     FROM terra_events WHERE id = $1 FOR UPDATE`,
    [id],
  );
  const row = rows[0] as Record<string, unknown> | undefined;
  if (!row) return null;
  return {
    id: row.id as string,
    type: row.type as string,
    terraReference: row.terra_reference as string | null,
    terraUserId: row.terra_user_id as string | null,
    provider: row.provider as string | null,
    referenceId: row.reference_id as string | null,
    userId: row.user_id as string | null,
    status: row.status as TerraEventStatus,
    receivedAt: row.received_at as Date,
    orderedAt: row.ordered_at as Date,
    appliedAt: row.applied_at as Date | null,
    body: openTerraBody({ sealed: row.sealed_body as Buffer, masterKeyId: row.master_key_id as string }, id, keyring),
  };
}

/** Records what ingestion made of an event (counts and paths, never a value). */
export async function recordTerraOutcome(
  client: PoolClient,
  id: string,
  result: { status: TerraEventStatus; userId: string | null; outcome: object },
): Promise<void> {
  await client.query(
    `UPDATE terra_events SET status = $2, user_id = $3, outcome = $4,
       applied_at = CASE WHEN $2 = 'applied' THEN COALESCE(applied_at, now()) ELSE applied_at END
     WHERE id = $1`,
    [id, result.status, result.userId, JSON.stringify(result.outcome)],
  );
}

/** Events no ingestion workflow was started for yet, oldest first (the worker's dispatcher starts them). */
export async function unstartedTerraEvents(pool: Pool, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM terra_events WHERE workflow_started_at IS NULL ORDER BY received_at, id LIMIT $1`,
    [limit],
  );
  return rows.map((row) => row.id);
}

export async function markTerraEventStarted(pool: Pool, id: string): Promise<void> {
  await pool.query(
    'UPDATE terra_events SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL',
    [id],
  );
}

/**
 * Unmatched events whose user has appeared since (a user with that id or name, or a connection of that Terra user):
 * handed back to the dispatcher, which runs their ingestion again. Returns how many.
 */
export async function requeueMatchedTerraEvents(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(
    `UPDATE terra_events e SET workflow_started_at = NULL, status = 'received'
     WHERE e.status = 'unmatched' AND (
       EXISTS (SELECT 1 FROM users u WHERE u.deleting_since IS NULL AND (u.id = e.reference_id OR u.name = e.reference_id))
       OR EXISTS (SELECT 1 FROM terra_connections c WHERE c.terra_user_id = e.terra_user_id))`,
  );
  return rowCount ?? 0;
}

/** Deletes events past their retention: every event after TERRA_EVENT_RETENTION_DAYS, an unmatched one sooner. */
export async function purgeExpiredTerraEvents(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM terra_events
     WHERE received_at < now() - make_interval(days => $1)
        OR (status = 'unmatched' AND received_at < now() - make_interval(days => $2))`,
    [TERRA_EVENT_RETENTION_DAYS, TERRA_UNMATCHED_RETENTION_DAYS],
  );
  return rowCount ?? 0;
}

/** The stored events of a user received since a moment, oldest first: what `npm run terra:replay` runs again. */
export async function terraEventIdsOfUser(pool: Pool, userId: string, since: Date): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM terra_events WHERE user_id = $1 AND received_at >= $2 ORDER BY received_at, id`,
    [userId, since],
  );
  return rows.map((row) => row.id);
}
