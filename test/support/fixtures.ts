import { Pool } from 'pg';
import { newId } from '../../platform/ids';

/** Inserts a bare user and a queued turn straight into Postgres, for tests below the API. */
export async function insertUserAndTurn(url: string, name = `u_${Math.random().toString(36).slice(2, 10)}`) {
  const pool = new Pool({ connectionString: url, max: 2 });
  const userId = newId('user');
  const turnId = newId('turn');
  await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [userId, name]);
  await pool.query(`INSERT INTO turns (id, user_id, status, messages, context) VALUES ($1, $2, 'queued', $3, $4)`, [
    turnId,
    userId,
    JSON.stringify([{ role: 'user', content: 'hi' }]),
    JSON.stringify({ include_memory: true, include_biomarkers: true }),
  ]);
  await pool.end();
  return { userId, turnId };
}
