/**
 * Which workflow run a turn belongs to (activities/bookkeeping/turn-attempts.ts): the first run claims the turn;
 * a new run after a reset opens the next attempt, keeping the failed one on record; a straggler of a
 * superseded run and any run of a completed turn are refused.
 */
import { Pool } from 'pg';
import { createEventLog, type EventLog } from '../../platform/event-log';
import { enterTurnRun } from '../../activities/bookkeeping/turn-attempts';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';

let t: TestDatabase;
let pool: Pool;
let events: EventLog;
const clock = () => new Date('2026-11-22T12:00:00Z');
const enter = (turnId: string, runId: string) => enterTurnRun({ pool, events, clock }, turnId, runId);

beforeAll(async () => {
  t = await createTestDatabase();
  pool = new Pool({ connectionString: t.url, max: 4 });
  events = createEventLog(pool);
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

const row = async (turnId: string) =>
  (await pool.query('SELECT status, attempt, run_ids, error, previous_attempts FROM turns WHERE id = $1', [turnId]))
    .rows[0];
const error = {
  code: 'upstream_unavailable' as const,
  message: 'Step synthesise failed',
  request_id: 'req_1',
  docs_url: 'x',
};

async function failedTurn() {
  const { turnId } = await insertUserAndTurn(t.url);
  expect(await enter(turnId, 'run-1')).toBe('claimed');
  await pool.query(`UPDATE turns SET status = 'failed', error = $2, completed_at = $3 WHERE id = $1`, [
    turnId,
    JSON.stringify(error),
    new Date('2026-11-22T11:00:00Z'),
  ]);
  await events.append(turnId, [
    { type: 'turn.failed', data: { turn_id: turnId, error, cost_usd: 0 }, dedupeKey: 'turn.terminal' },
  ]);
  return turnId;
}

test('the first run claims the turn; its later activities find it current and change nothing', async () => {
  const { turnId } = await insertUserAndTurn(t.url);
  expect(await enter(turnId, 'run-1')).toBe('claimed');
  expect(await enter(turnId, 'run-1')).toBe('current');
  expect(await row(turnId)).toMatchObject({ status: 'queued', attempt: 1, run_ids: ['run-1'], previous_attempts: [] });
  expect(await events.readAfter(turnId, 0)).toEqual([]);
});

test('a new run of a failed turn opens attempt 2 and announces it once, after turn.failed', async () => {
  const turnId = await failedTurn();
  expect(await enter(turnId, 'run-2')).toBe('reopened');
  expect(await enter(turnId, 'run-2')).toBe('current');
  expect(await row(turnId)).toMatchObject({
    status: 'running',
    attempt: 2,
    error: null,
    run_ids: ['run-1', 'run-2'],
    previous_attempts: [{ attempt: 1, error, ended_at: '2026-11-22T11:00:00.000Z' }],
  });
  const log = await events.readAfter(turnId, 0);
  expect(log.map((e) => [e.id, e.type])).toEqual([
    [1, 'turn.failed'],
    [2, 'turn.retried'],
  ]);
  expect(log[1].data).toEqual({ turn_id: turnId, attempt: 2, previous_error: error, at: '2026-11-22T12:00:00.000Z' });
});

test('an activity of the superseded run is refused and writes nothing', async () => {
  const turnId = await failedTurn();
  await enter(turnId, 'run-2');
  await expect(enter(turnId, 'run-1')).rejects.toMatchObject({ type: 'TurnRunSupersededError', nonRetryable: true });
  expect(await row(turnId)).toMatchObject({ status: 'running', attempt: 2 });
});

test('a reset of a running turn opens a new attempt with no error to keep', async () => {
  const { turnId } = await insertUserAndTurn(t.url);
  await enter(turnId, 'run-1');
  await pool.query(`UPDATE turns SET status = 'running' WHERE id = $1`, [turnId]);
  expect(await enter(turnId, 'run-2')).toBe('reopened');
  expect(await row(turnId)).toMatchObject({
    status: 'running',
    attempt: 2,
    previous_attempts: [{ attempt: 1, error: null, ended_at: '2026-11-22T12:00:00.000Z' }],
  });
});

test('a completed turn refuses every new run: its answer stands', async () => {
  const { turnId } = await insertUserAndTurn(t.url);
  await enter(turnId, 'run-1');
  await pool.query(`UPDATE turns SET status = 'completed' WHERE id = $1`, [turnId]);
  await expect(enter(turnId, 'run-2')).rejects.toMatchObject({ type: 'TurnNotRetryableError', nonRetryable: true });
  expect(await row(turnId)).toMatchObject({ status: 'completed', attempt: 1, run_ids: ['run-1'] });
});

test('an unknown turn is left to the activity to report', async () => {
  expect(await enter('turn_01JUNKNOWNUNKNOWNUNKNOWNXX', 'run-1')).toBe('unknown_turn');
});
