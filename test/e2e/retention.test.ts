/**
 * Retention of the SSE event log: events of turns past the replay window are deleted, the turns are
 * kept, running turns are untouched; Idempotency-Keys past their 24 h are deleted; and the schedule
 * that runs the purge is created once.
 */
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Pool } from 'pg';
import { createPurgeExpiredTurnEvents } from '../../activities/bookkeeping/retention';
import { ensureRetentionSchedule, RETENTION_SCHEDULE_ID } from '../../worker/retention-schedule';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';
import { readTestEnv } from '../support/test-env';

const WINDOW_SECONDS = 3600;

describe('purgeExpiredTurnEvents', () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  /** A turn with `events` log rows, completed `completedSecondsAgo` ago, or still running when null. */
  async function turnWithEvents(completedSecondsAgo: number | null, events = 3): Promise<string> {
    const { turnId } = await insertUserAndTurn(database.url);
    await pool.query(
      `UPDATE turns SET status = $2, started_at = now() - interval '2 days',
         completed_at = CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(secs => $3::int) END,
         last_event_id = $4
       WHERE id = $1`,
      [turnId, completedSecondsAgo === null ? 'running' : 'completed', completedSecondsAgo, events],
    );
    for (let id = 1; id <= events; id++) {
      await pool.query(`INSERT INTO turn_events (turn_id, id, type, data) VALUES ($1, $2, 'agent.thought', '{}')`, [
        turnId,
        id,
      ]);
    }
    return turnId;
  }

  async function eventCount(turnId: string): Promise<number> {
    const res = await pool.query('SELECT count(*)::int AS n FROM turn_events WHERE turn_id = $1', [turnId]);
    return res.rows[0].n;
  }

  test('deletes only the events of turns past the window, in batches; turns and running turns stay', async () => {
    const old = [await turnWithEvents(2 * WINDOW_SECONDS), await turnWithEvents(WINDOW_SECONDS + 60, 4)];
    const recent = await turnWithEvents(WINDOW_SECONDS - 60);
    const running = await turnWithEvents(null);

    // A batch of 2 makes the 7 expired rows take four DELETEs, the last one short.
    const purge = createPurgeExpiredTurnEvents({ pool }, 2);
    const deleted = await new MockActivityEnvironment().run(purge, { olderThanSeconds: WINDOW_SECONDS });

    expect(deleted).toBe(7);
    for (const turnId of old) expect(await eventCount(turnId)).toBe(0);
    expect(await eventCount(recent)).toBe(3);
    expect(await eventCount(running)).toBe(3);
    const turns = await pool.query('SELECT id FROM turns WHERE id = ANY($1)', [[...old, recent, running]]);
    expect(turns.rowCount).toBe(4);

    // Nothing left to purge: a second run is a no-op.
    expect(await new MockActivityEnvironment().run(purge, { olderThanSeconds: WINDOW_SECONDS })).toBe(0);
    expect(await eventCount(recent)).toBe(3);
  });

  test('deletes the Idempotency-Keys older than 24 h, and only those; their turns stay', async () => {
    const { userId, turnId } = await insertUserAndTurn(database.url);
    const key = async (name: string, ageMinutes: number) =>
      pool.query(
        `INSERT INTO idempotency_keys (user_id, key, request_hash, turn_id, created_at)
         VALUES ($1, $2, 'hash', $3, now() - make_interval(mins => $4))`,
        [userId, name, turnId, ageMinutes],
      );
    await key('expired', 25 * 60);
    await key('just-expired', 24 * 60 + 1);
    await key('fresh', 23 * 60);

    await new MockActivityEnvironment().run(createPurgeExpiredTurnEvents({ pool }), {
      olderThanSeconds: WINDOW_SECONDS,
    });

    const left = await pool.query('SELECT key FROM idempotency_keys WHERE user_id = $1', [userId]);
    expect(left.rows.map((r) => r.key)).toEqual(['fresh']);
    expect((await pool.query('SELECT id FROM turns WHERE id = $1', [turnId])).rowCount).toBe(1);
  });
});

describe('ensureRetentionSchedule', () => {
  let connection: Connection;
  let client: Client;

  async function deleteSchedule() {
    await client.schedule
      .getHandle(RETENTION_SCHEDULE_ID)
      .delete()
      .catch((err: unknown) => {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      });
  }

  beforeAll(async () => {
    connection = await Connection.connect({ address: readTestEnv().temporalAddress });
    client = new Client({ connection });
    // A worker-process suite (worker/main.ts) may have created it with its own task queue.
    await deleteSchedule();
  });
  afterAll(async () => {
    if (client) await deleteSchedule();
    await connection?.close();
  });

  test('creates the schedule once: every 15 minutes, overlap SKIP, RetentionWorkflow with the window', async () => {
    const taskQueue = `amy-retention-test-${Math.random().toString(36).slice(2, 8)}`;
    await ensureRetentionSchedule(client, { taskQueue, replayWindowSeconds: WINDOW_SECONDS });
    await ensureRetentionSchedule(client, { taskQueue, replayWindowSeconds: WINDOW_SECONDS });

    const described = await client.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
    expect(described.spec.intervals).toHaveLength(1);
    expect(described.spec.intervals?.[0].every).toBe(15 * 60 * 1000);
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'RetentionWorkflow',
      taskQueue,
      args: [{ olderThanSeconds: WINDOW_SECONDS }],
    });

    const ids: string[] = [];
    for await (const schedule of client.schedule.list()) ids.push(schedule.scheduleId);
    expect(ids.filter((id) => id === RETENTION_SCHEDULE_ID)).toHaveLength(1);
  });
});
