/**
 * The codec server's audit of decodes (`codec_decode_audit`, docs/operations.md#the-codec-server): decoding is an
 * operator reading users' health data, so each decode request is recorded before anything is decoded (no row, no
 * decode), with who asked, from where, about which workflow, and whose data it was: the data keys the payloads
 * name and those keys' users (`user_data_keys`). Never a payload's content. Rows are kept for the retention an
 * operator sets (AMY_CODEC_AUDIT_RETENTION_DAYS), then deleted.
 */
import type { Payload } from '@temporalio/common';
import type { Pool } from 'pg';

/**
 * The metadata entry in which the payload codec (platform/temporal/encryption-codec.ts) names the data key of an
 * encrypted payload; test/e2e/codec-server.test.ts checks it against a payload of a real turn's history.
 */
const ENCRYPTION_KEY_ID = 'encryption-key-id';
/** Longer than any namespace or workflow id the service makes: what a request claims is cut there. */
const MAX_NAME_LENGTH = 256;

/** The data key ids the payloads name, each once, in order of first appearance; plain payloads name none. */
function dataKeyIdsOf(payloads: Payload[]): string[] {
  const ids = payloads
    .map((payload) => payload.metadata?.[ENCRYPTION_KEY_ID])
    .filter((id): id is Uint8Array => id !== undefined && id !== null)
    .map((id) => Buffer.from(id).toString('utf8'));
  return [...new Set(ids)];
}

export interface DecodeRequest {
  operator: string;
  clientAddress: string;
  namespace: string | null;
  workflowId: string | null;
  payloads: Payload[];
}

/** Records the decode; returns the key ids and the users it names, for the log line. */
export async function recordDecode(
  pool: Pool,
  request: DecodeRequest,
): Promise<{ keyIds: string[]; userIds: string[] }> {
  const keyIds = dataKeyIdsOf(request.payloads);
  const { rows } = await pool.query<{ user_ids: string[] }>(
    `INSERT INTO codec_decode_audit (operator, client_address, namespace, workflow_id, payloads, key_ids, user_ids)
     SELECT $1, $2, $3, $4, $5, $6::text[],
            ARRAY(SELECT DISTINCT k.user_id FROM user_data_keys k WHERE k.id = ANY($6::text[]) ORDER BY k.user_id)
     RETURNING user_ids`,
    [
      request.operator,
      request.clientAddress,
      request.namespace?.slice(0, MAX_NAME_LENGTH) ?? null,
      request.workflowId?.slice(0, MAX_NAME_LENGTH) ?? null,
      request.payloads.length,
      keyIds,
    ],
  );
  return { keyIds, userIds: rows[0].user_ids };
}

/** Deletes the audit rows older than the retention; returns how many. */
export async function deleteExpiredDecodeAudit(pool: Pool, retentionDays: number): Promise<number> {
  const { rowCount } = await pool.query(
    'DELETE FROM codec_decode_audit WHERE decoded_at < now() - make_interval(days => $1)',
    [retentionDays],
  );
  return rowCount ?? 0;
}
