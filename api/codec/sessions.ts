/**
 * The codec server's sign-in sessions (`codec_sessions`, docs/operations.md#the-codec-server). Signing in with an
 * operator token gives the browser a random session id, never the token: a cookie that leaks (a browser profile
 * copied, a proxy's log) is worth one session, which expires, can be ended, and ends when the token changes.
 * Only the id's SHA-256 is stored, so the table opens no session either. Every API process checks the same
 * rows, so a sign-in through one codec listener holds on all of them.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { sha256Hex, type CodecOperator } from './operators';

/** How long a sign-in lasts: a working day, after which the operator signs in again. */
export const CODEC_SESSION_SECONDS = 12 * 60 * 60;

/** Opens a session for the operator; returns its id, for the cookie (shown nowhere else). */
export async function startCodecSession(pool: Pool, operator: CodecOperator): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  await pool.query(
    `INSERT INTO codec_sessions (id_hash, operator, token_hash, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [sha256Hex(sessionId), operator.name, operator.tokenHash, CODEC_SESSION_SECONDS],
  );
  return sessionId;
}

/** The session's operator and token hash while it lasts; null once it has expired or ended, or if it never was. */
export async function codecSessionOf(pool: Pool, sessionId: string): Promise<CodecOperator | null> {
  const { rows } = await pool.query<{ operator: string; token_hash: string }>(
    'SELECT operator, token_hash FROM codec_sessions WHERE id_hash = $1 AND expires_at > now()',
    [sha256Hex(sessionId)],
  );
  return rows[0] ? { name: rows[0].operator, tokenHash: rows[0].token_hash } : null;
}

/** Signs the session out; returns its operator's name, or null when there was no such session. */
export async function endCodecSession(pool: Pool, sessionId: string): Promise<string | null> {
  const { rows } = await pool.query<{ operator: string }>(
    'DELETE FROM codec_sessions WHERE id_hash = $1 RETURNING operator',
    [sha256Hex(sessionId)],
  );
  return rows[0]?.operator ?? null;
}

/** Deletes the sessions that have expired; returns how many. */
export async function deleteExpiredCodecSessions(pool: Pool): Promise<number> {
  const { rowCount } = await pool.query('DELETE FROM codec_sessions WHERE expires_at <= now()');
  return rowCount ?? 0;
}
