/**
 * The reconciler of abandoned turns cannot starve, against a real Postgres and Temporal: old turns it
 * cannot resolve (their workflows still open, here on a task queue nobody polls) fill its batch run
 * after run, yet a newer abandoned turn is failed within a few runs, since each run takes the turns it
 * looked at least recently. A turn whose workflow cannot be described does not stop the others.
 */
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Pool } from 'pg';
import { createReconcileAbandonedTurns } from '../../activities/bookkeeping/reconcile-turns';
import { TURN_WORKFLOW_TYPE } from '../../workflows/definitions';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';
import { readTestEnv } from '../support/test-env';

let database: TestDatabase;
let pool: Pool;
let connection: Connection;
let temporal: Client;
const openWorkflows: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new Pool({ connectionString: database.url, max: 2 });
  connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  temporal = new Client({ connection });
});
afterAll(async () => {
  await Promise.allSettled(openWorkflows.map((id) => temporal.workflow.getHandle(id).terminate('test over')));
  await connection?.close();
  await pool?.end();
  await database?.drop();
});

/** A running turn created `ageSeconds` ago; with `openWorkflow`, its workflow is open on a queue nobody polls. */
async function runningTurn(ageSeconds: number, openWorkflow: boolean): Promise<string> {
  const { turnId } = await insertUserAndTurn(database.url);
  await pool.query(
    `UPDATE turns SET status = 'running', started_at = now() - make_interval(secs => $2),
       created_at = now() - make_interval(secs => $2) WHERE id = $1`,
    [turnId, ageSeconds],
  );
  if (openWorkflow) {
    await temporal.workflow.start(TURN_WORKFLOW_TYPE, {
      workflowId: turnId,
      taskQueue: `nobody-polls-${Math.random().toString(36).slice(2)}`,
      args: [],
    });
    openWorkflows.push(turnId);
  }
  return turnId;
}

const statusOf = async (turnId: string) =>
  (await pool.query<{ status: string }>('SELECT status FROM turns WHERE id = $1', [turnId])).rows[0].status;

test('old turns it cannot resolve do not keep a newer abandoned turn from being failed', async () => {
  const BATCH = 2;
  const stuck = [await runningTurn(3 * 86_400, true), await runningTurn(2 * 86_400, true)];
  const abandoned = await runningTurn(3_600, false);
  const reconcile = createReconcileAbandonedTurns({ pool, temporal, clock: () => new Date() }, BATCH);
  const failed: string[] = [];
  for (let run = 0; run < 3 && !failed.includes(abandoned); run++) {
    failed.push(...((await new MockActivityEnvironment().run(reconcile, { abandonedAfterSeconds: 300 })) as string[]));
  }
  expect(failed).toEqual([abandoned]);
  expect(await statusOf(abandoned)).toBe('failed');
  for (const id of stuck) expect(await statusOf(id)).toBe('running');
});

test('a turn whose workflow cannot be described is passed over, and the rest of the batch is still reconciled', async () => {
  // A workflow id Temporal refuses to describe (InvalidArgument: an empty id), the oldest of all.
  const { userId } = await insertUserAndTurn(database.url);
  const undescribable = '';
  await pool.query(
    `INSERT INTO turns (id, user_id, status, messages, context, created_at)
     VALUES ($1, $2, 'running', '[]', '{}', now() - interval '5 days')`,
    [undescribable, userId],
  );
  const abandoned = await runningTurn(3_600, false);
  const reconcile = createReconcileAbandonedTurns({ pool, temporal, clock: () => new Date() }, 10);
  const failed = (await new MockActivityEnvironment().run(reconcile, { abandonedAfterSeconds: 300 })) as string[];
  expect(failed).toContain(abandoned);
  expect(await statusOf(undescribable)).toBe('running');
});
