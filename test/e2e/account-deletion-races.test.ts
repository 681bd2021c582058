/**
 * Account deletion leaves nothing behind, even under races (docs/api.md#deleting-an-account), on a real API,
 * worker, Temporal and Postgres:
 *
 * - every key of the account is revoked before anything else, so nothing is created for it meanwhile, and a
 *   deletion that failed half-way is finished by sending it again with the same key;
 * - a streaming POST answered 201 before its workflow exists: the workflow, started after the deletion looked
 *   for it, does not survive, whether its start was in the deleting API process or in another one;
 * - every run of a retried turn is deleted, not only the latest;
 * - the webhook events that named the account go with it, and the response says how many.
 *
 * Starts that reach Temporal late are made by an API of the suite's own (createApp, as the abandoned-turns suite
 * does) whose codec encodes a turn's start at once, with the user's key, and holds it until told.
 */
import http from 'node:http';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Pool } from 'pg';
import { createApp } from '../../api/app';
import { createPendingTurnStarts } from '../../api/temporal/pending-turn-starts';
import { createQueuedTurn } from '../../api/tables/turns';
import { createDataKeyStore } from '../../platform/crypto/data-keys';
import { loadMasterKeyring } from '../../platform/crypto/master-key';
import { issueApiKey } from '../../platform/users';
import { createDataConverter } from '../../platform/temporal/data-converter';
import { createWorkflowOwners } from '../../platform/temporal/workflow-owner';
import { addWebhookEndpoint } from '../../platform/webhooks/endpoints';
import { TURN_WITHOUT_OWNER_REASON } from '../../worker/turns-without-owner';
import { runCli } from '../support/cli';
import { api, thanks } from '../support/http';
import { startTestService, silentLogger, type TestService } from '../support/service';

jest.setTimeout(300_000);

const WorkflowExecutionStatus = temporal.api.enums.v1.WorkflowExecutionStatus;

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({ env: { AMY_WEBHOOKS_ALLOW_PRIVATE: '1' } });
});
afterAll(async () => {
  await svc?.close();
});

/**
 * An API of the suite's own on its database and Temporal. Its turn starts are encoded at once (the user's data
 * key made or read then) and reach Temporal only once `release()` is called: a start slowed on its way, as on a
 * busy server. With `failFirstKeyDestruction`, the first deletion fails half-way (its keys already revoked).
 */
async function startApiWithHeldStarts(opts: { failFirstKeyDestruction?: boolean } = {}) {
  const connection = await Connection.connect({ address: svc.config.TEMPORAL_ADDRESS });
  const pool = new Pool({ connectionString: svc.database.url, max: 4 });
  const keys = createDataKeyStore(pool, loadMasterKeyring());
  const turnOwners = createWorkflowOwners(pool);
  const codec = createDataConverter(pool, keys, { owners: turnOwners }).payloadCodecs![0];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const holding: PayloadCodec = {
    async encode(payloads, context) {
      const sealed = await codec.encode(payloads, context);
      if (context?.type === 'workflow') await released;
      return sealed;
    },
    decode: (payloads, context) => codec.decode(payloads, context),
  };
  let destructions = 0;
  const pendingStarts = createPendingTurnStarts();
  const app = createApp({
    pool,
    temporal: new Client({ connection, dataConverter: { payloadCodecs: [holding] } }),
    turnOwners,
    taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
    logger: silentLogger,
    maxInFlightTurns: 3,
    costCapDefaults: { daily: null, monthly: null },
    maxTurnsPerMinute: 60,
    turnRunTimeoutSeconds: 3600,
    turnStartWaitMs: 0,
    pendingStarts,
    bodyLimitBytes: 1 << 20,
    keys: {
      ...keys,
      async destroyUserKeys(userId: string) {
        if (opts.failFirstKeyDestruction && destructions++ === 0) throw new Error('Postgres went away');
        return keys.destroyUserKeys(userId);
      },
    },
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    release,
    async close() {
      release();
      await pendingStarts.settled(30_000);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
      await connection.close();
    },
  };
}

/** The run's status once Temporal answers for it; null once it is not found (deleted). */
async function runStatus(workflowId: string, runId?: string): Promise<number | null> {
  try {
    const { workflowExecutionInfo } = await svc.temporal.workflowService.describeWorkflowExecution({
      namespace: svc.config.TEMPORAL_NAMESPACE,
      execution: { workflowId, ...(runId ? { runId } : {}) },
    });
    return workflowExecutionInfo!.status!;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return null;
    throw err;
  }
}

/** Waits until `check` holds (Temporal deletes in the background: 30 to 40 s on the dev server here). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function rowsOf(userId: string): Promise<number> {
  const { rows } = await svc.database.pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM users WHERE id = $1) + (SELECT count(*) FROM turns WHERE user_id = $1)
          + (SELECT count(*) FROM api_keys WHERE user_id = $1) + (SELECT count(*) FROM user_data_keys WHERE user_id = $1)
          AS n`,
    [userId],
  );
  return Number(rows[0].n);
}

test('every key is revoked first: a deletion that fails half-way leaves the account refused, and the same key finishes it', async () => {
  const own = await startApiWithHeldStarts({ failFirstKeyDestruction: true });
  try {
    const user = await svc.createUser();
    const secondKey = await issueApiKey(svc.database.pool, user.userId);
    const failed = await api(own.url, 'DELETE', '/v1/account', { key: user.apiKey });
    expect(failed.status).toBe(500);

    // Neither key creates or reads anything any more, through any API process.
    for (const key of [user.apiKey, secondKey]) {
      for (const url of [own.url, svc.url]) {
        const created = await api(url, 'POST', '/v1/turns', { key, body: thanks });
        expect({ url, status: created.status, code: created.body.error?.code }).toEqual({
          url,
          status: 401,
          code: 'invalid_api_key',
        });
        expect((await api(url, 'GET', '/v1/memory', { key })).status).toBe(401);
      }
    }
    expect(
      (await svc.database.pool.query('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [user.userId])).rows[0]
        .n,
    ).toBe(0);

    // The deletion itself, sent again with the same key, finishes.
    const finished = await api(own.url, 'DELETE', '/v1/account', { key: user.apiKey });
    expect(finished.status).toBe(200);
    expect(finished.body.erased).toMatchObject({ api_keys: 2 });
    expect(await rowsOf(user.userId)).toBe(0);
    expect((await api(own.url, 'DELETE', '/v1/account', { key: user.apiKey })).status).toBe(401);
  } finally {
    await own.close();
  }
});

test('a request let in just before the keys were revoked creates no turn: creation refuses an account being deleted', async () => {
  const user = await svc.createUser();
  await svc.database.pool.query('UPDATE users SET deleting_since = now() WHERE id = $1', [user.userId]);
  await expect(
    createQueuedTurn(svc.database.pool, {
      userId: user.userId,
      messages: [{ role: 'user', content: 'thanks!' }],
      context: { include_memory: true, include_biomarkers: true },
      maxInFlight: 3,
      costCaps: { daily: null, monthly: null },
      maxPerMinute: 60,
    }),
  ).rejects.toMatchObject({ code: 'invalid_api_key' });
  const { rows } = await svc.database.pool.query('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [
    user.userId,
  ]);
  expect(rows[0].n).toBe(0);
});

test('a start still on its way in the deleting API process: the deletion waits for it, and its workflow is deleted too', async () => {
  const own = await startApiWithHeldStarts();
  try {
    const user = await svc.createUser();
    const created = await api(own.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks });
    expect(created.status).toBe(201);
    const turnId = created.body.id as string;
    expect(await runStatus(turnId)).toBeNull(); // answered 201; the workflow does not exist yet
    setTimeout(own.release, 1_000);
    const deletion = await api(own.url, 'DELETE', '/v1/account', { key: user.apiKey });
    expect(deletion.status).toBe(200);
    expect(deletion.body.erased).toMatchObject({ turns: 1, workflow_executions: 1 });
    await eventually('the late workflow is deleted', async () => (await runStatus(turnId)) === null);
    expect(await rowsOf(user.userId)).toBe(0);
  } finally {
    await own.close();
  }
});

test('a start still on its way in another API process lands after the deletion: the worker terminates it before a step', async () => {
  const other = await startApiWithHeldStarts();
  try {
    const user = await svc.createUser();
    const created = await api(other.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks });
    expect(created.status).toBe(201);
    const turnId = created.body.id as string;
    const deletion = await api(svc.url, 'DELETE', '/v1/account', { key: user.apiKey });
    expect(deletion.status).toBe(200);
    expect(deletion.body.erased).toMatchObject({ turns: 1, workflow_executions: 0 });

    other.release();
    await eventually('the workflow started late is closed', async () => {
      const status = await runStatus(turnId);
      return status !== null && status !== WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
    });
    expect(await runStatus(turnId)).toBe(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED);
    const events = (await svc.temporal.workflow.getHandle(turnId).fetchHistory()).events ?? [];
    expect(events.flatMap((e) => e.workflowExecutionTerminatedEventAttributes?.reason ?? [])).toEqual([
      TURN_WITHOUT_OWNER_REASON,
    ]);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(await rowsOf(user.userId)).toBe(0);
  } finally {
    await other.close();
  }
});

test('every run of a retried turn is deleted, not only the latest', async () => {
  const user = await svc.createUser();
  svc.scripted.faults.inject({ kind: 'server_error', step: 'classify_vagueness', times: 4 });
  const created = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...thanks, stream: false } });
  expect(created.body.status).toBe('failed');
  const turnId = created.body.id as string;
  const retried = await runCli('scripts/turn-retry.ts', [turnId], {
    TEMPORAL_ADDRESS: svc.config.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: svc.config.TEMPORAL_NAMESPACE,
    DATABASE_URL: svc.config.DATABASE_URL,
  });
  expect(retried.code).toBe(0);
  await svc.temporal.workflow.getHandle(turnId).result();
  const { rows } = await svc.database.pool.query<{ run_ids: string[] }>('SELECT run_ids FROM turns WHERE id = $1', [
    turnId,
  ]);
  const runIds = rows[0].run_ids;
  expect(runIds).toHaveLength(2);
  for (const runId of runIds) expect(await runStatus(turnId, runId)).not.toBeNull();

  const deletion = await api(svc.url, 'DELETE', '/v1/account', { key: user.apiKey });
  expect(deletion.body.erased).toMatchObject({ turns: 1, workflow_executions: 2 });
  for (const runId of runIds) {
    await eventually(`run ${runId} is deleted`, async () => (await runStatus(turnId, runId)) === null);
  }
});

test('the webhook events that named the account go with it; the response counts them, and account.deleted stays', async () => {
  await addWebhookEndpoint(
    svc.database.pool,
    loadMasterKeyring(),
    { allowPrivate: true },
    { url: 'http://127.0.0.1:9/hooks', eventTypes: ['turn.completed', 'account.deleted'] },
  );
  const user = await svc.createUser();
  for (let i = 0; i < 2; i++) {
    const turn = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...thanks, stream: false } });
    expect(turn.body.status).toBe('completed');
  }
  const naming = () =>
    svc.database.pool
      .query<{ type: string }>(
        `SELECT type FROM webhook_events WHERE payload -> 'data' ->> 'user_id' = $1 ORDER BY type`,
        [user.userId],
      )
      .then((r) => r.rows.map((row) => row.type));
  expect(await naming()).toEqual(['turn.completed', 'turn.completed']);

  const deletion = await api(svc.url, 'DELETE', '/v1/account', { key: user.apiKey });
  expect(deletion.body.erased.webhook_events).toBe(2);
  expect(deletion.body.kept.map((k: { what: string }) => k.what)).toEqual([
    expect.stringContaining('deletion record'),
    expect.stringContaining('account.deleted'),
  ]);
  expect(await naming()).toEqual(['account.deleted']);
});

test("an operator's decodes of the account's payloads stay audited, and the answer says so", async () => {
  const user = await svc.createUser();
  await svc.database.pool.query(
    `INSERT INTO codec_decode_audit (operator, client_address, payloads, key_ids, user_ids)
     VALUES ('ops-ann', '127.0.0.1', 1, ARRAY['dk_x'], ARRAY[$1])`,
    [user.userId],
  );
  const deletion = await api(svc.url, 'DELETE', '/v1/account', { key: user.apiKey });
  expect(deletion.status).toBe(200);
  expect(deletion.body.kept.map((k: { what: string }) => k.what)).toContainEqual(
    expect.stringContaining("Audit records of operators' decodes"),
  );
});
