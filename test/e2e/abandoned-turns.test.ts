/**
 * Turns stuck in flight, over a real API, worker, Temporal and Postgres: a turn whose
 * workflow was terminated, or ran past its run bound (AMY_TURN_RUN_TIMEOUT_SECONDS), is failed by the
 * reconciler that the retention schedule runs (here the schedule's workflow run once), and its open
 * stream ends with `turn.failed`; a turn whose row is gone is terminated by the worker, nothing of it
 * written under any key, instead of retrying forever; a start the API reports as failed leaves nothing in flight, even when Temporal
 * had accepted it; and a start slower than AMY_TURN_START_WAIT_MS goes on after its POST's 201: the turn
 * runs (and can be cancelled meanwhile), or fails on its stream if the start does.
 */
import http from 'node:http';
import {
  Client,
  Connection,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type WorkflowClientInterceptor,
} from '@temporalio/client';
import { Pool } from 'pg';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { turnSchema, type Turn } from '../../contracts/turn';
import { createApp } from '../../api/app';
import { createPendingTurnStarts } from '../../api/temporal/pending-turn-starts';
import { createDataConverter } from '../../platform/temporal/data-converter';
import { createWorkflowOwners } from '../../platform/temporal/workflow-owner';
import { RETENTION_WORKFLOW_ID } from '../../platform/temporal/service-workflows';
import { TURN_WITHOUT_OWNER_REASON } from '../../worker/turns-without-owner';
import { historyPayloads, type TurnHistory } from '../support/history';
import { api, expectSchema, thanks } from '../support/http';
import { startTestService, silentLogger, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';

/** How long a test waits for an outcome that takes well under a second when the fix is in. */
const BOUND_MS = 30_000;

async function getTurn(svc: TestService, key: string, id: string): Promise<Turn> {
  const res = await api(svc.url, 'GET', `/v1/turns/${id}`, { key });
  expect(res.status).toBe(200);
  return expectSchema(turnSchema, res.body);
}

/** Polls until the turn is running its `step`; the slow fault holds it there. */
async function waitForStep(svc: TestService, key: string, id: string, step: string): Promise<void> {
  const deadline = Date.now() + BOUND_MS;
  while ((await getTurn(svc, key, id)).progress?.current_step !== step) {
    if (Date.now() > deadline) throw new Error(`turn ${id} never reached ${step}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The `amy-retention` schedule's workflow, run once now rather than in 15 minutes. */
async function runRetentionOnce(svc: TestService): Promise<void> {
  await svc.temporal.workflow.execute('RetentionWorkflow', {
    taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
    workflowId: `${RETENTION_WORKFLOW_ID}-now-${Math.random().toString(36).slice(2)}`,
    args: [{ olderThanSeconds: 3600, abandonedAfterSeconds: 0 }],
  });
}

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${BOUND_MS} ms`)), BOUND_MS);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

async function expectAbandoned(svc: TestService, key: string, id: string, message: string) {
  const stream = openEventStream(`${svc.url}/v1/turns/${id}/events`, { apiKey: key });
  try {
    await stream.waitFor((e) => e.type === 'turn.started', BOUND_MS);
    expect((await getTurn(svc, key, id)).status).toBe('running');
    await runRetentionOnce(svc);
    const failed = await stream.waitFor((e) => e.type === 'turn.failed', BOUND_MS);
    await within(stream.closedByServer, 'the stream closed');
    expect(failed.data).toMatchObject({ turn_id: id, error: { code: 'turn_abandoned', message } });
    expect(stream.events.map((e) => e.id)).toEqual(stream.events.map((_, i) => i + 1));
    expect(stream.events.at(-1)?.type).toBe('turn.failed');
  } finally {
    stream.close();
  }
  const turn = await getTurn(svc, key, id);
  expect(turn).toMatchObject({ status: 'failed', error: { code: 'turn_abandoned', message } });
  expect(turn.last_event_id).toBe(
    (await svc.database.pool.query('SELECT max(id) AS n FROM turn_events WHERE turn_id = $1', [id])).rows[0].n,
  );
}

describe('with the default run bound', () => {
  let svc: TestService;
  let user: { userId: string; apiKey: string };

  beforeAll(async () => {
    svc = await startTestService();
    user = await svc.createUser();
  });
  afterAll(async () => {
    await svc?.close();
  });

  test('a terminated workflow: the reconciler fails its running turn, the open stream ends with turn.failed, the slot is free', async () => {
    await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 20_000 });
    const id = (await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks })).body.id as string;
    await waitForStep(svc, user.apiKey, id, 'fallback_reply');
    await svc.temporal.workflow.getHandle(id).terminate('an operator stops the turn');
    await expectAbandoned(svc, user.apiKey, id, 'The turn was stopped before it finished.');
    const inFlight = await svc.database.pool.query(
      `SELECT count(*)::int AS n FROM turns WHERE user_id = $1 AND status IN ('queued', 'running')`,
      [user.userId],
    );
    expect(inFlight.rows[0].n).toBe(0);
  });

  test('a running workflow is left alone, and the reconciler touches no turn that ended by itself', async () => {
    await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 3_000 });
    const id = (await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks })).body.id as string;
    await waitForStep(svc, user.apiKey, id, 'fallback_reply');
    await runRetentionOnce(svc);
    expect((await getTurn(svc, user.apiKey, id)).status).toBe('running');
    await svc.temporal.workflow.getHandle(id).result();
    await runRetentionOnce(svc);
    const turn = await getTurn(svc, user.apiKey, id);
    expect(turn.status).toBe('completed');
    const last = await svc.database.pool.query(
      'SELECT type FROM turn_events WHERE turn_id = $1 ORDER BY id DESC LIMIT 1',
      [id],
    );
    expect(last.rows[0].type).toBe('turn.completed');
  });

  test('a turn whose row is gone: the worker terminates its workflow, which runs no step and writes nothing under any key', async () => {
    await svc.stopWorker();
    let id: string;
    try {
      id = (await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks })).body.id as string;
      await svc.database.pool.query('DELETE FROM turns WHERE id = $1', [id]);
    } finally {
      await svc.startWorker();
    }
    const handle = svc.temporal.workflow.getHandle(id);
    await expect(within(handle.result(), 'the workflow ended')).rejects.toBeInstanceOf(WorkflowFailedError);
    const events = (await handle.fetchHistory()).events ?? [];
    const terminated = events.flatMap((e) => e.workflowExecutionTerminatedEventAttributes ?? []);
    expect(terminated.map((t) => t.reason)).toEqual([TURN_WITHOUT_OWNER_REASON]);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    // Only the start's input, sealed for the user when the row still was, holds a payload's data: no key that
    // outlives the user (the service key of earlier releases) sealed anything.
    const keyIds = historyPayloads({ events } as TurnHistory).flatMap((p) => {
      const keyId = p.metadata?.['encryption-key-id'];
      return keyId ? [Buffer.from(keyId).toString('utf8')] : [];
    });
    expect(keyIds.length).toBeGreaterThan(0);
    for (const keyId of keyIds) expect(keyId).toMatch(/^dk_/);
  });

  /**
   * An API of its own on the suite's database and Temporal, whose client's workflow starts go through
   * `interceptor`, and which answers a streaming POST after `turnStartWaitMs` at most. It serves the
   * Express routes only: streams are read from the suite's API.
   */
  async function startApiWith(interceptor: WorkflowClientInterceptor, turnStartWaitMs: number) {
    const connection = await Connection.connect({ address: svc.config.TEMPORAL_ADDRESS });
    const pool = new Pool({ connectionString: svc.database.url, max: 4 });
    const turnOwners = createWorkflowOwners(pool);
    const pendingStarts = createPendingTurnStarts();
    const app = createApp({
      pool,
      temporal: new Client({
        connection,
        interceptors: { workflow: [interceptor] },
        dataConverter: createDataConverter(pool, svc.dataKeys, { owners: turnOwners }),
      }),
      turnOwners,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      logger: silentLogger,
      maxInFlightTurns: 3,
      costCapDefaults: { daily: null, monthly: null },
      maxTurnsPerMinute: 60,
      turnRunTimeoutSeconds: 3600,
      turnStartWaitMs,
      pendingStarts,
      bodyLimitBytes: 1 << 20,
      keys: svc.dataKeys,
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      pool,
      async close() {
        await pendingStarts.settled(BOUND_MS);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await pool.end();
        await connection.close();
      },
    };
  }

  /** Starts that reach Temporal after `delayMs`, and then (with `lose`) hear an error instead of the answer. */
  function delayedStarts(delayMs: number, lose: boolean) {
    const accepted: string[] = [];
    const start = async <T>(input: { options: { workflowId: string } }, next: () => Promise<T>): Promise<T> => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const answer = await next();
      accepted.push(input.options.workflowId);
      if (lose) throw new Error('the response to the start was lost');
      return answer;
    };
    const interceptor: WorkflowClientInterceptor = {
      start: (input, next) => start(input, () => next(input)),
      startWithDetails: (input, next) => start(input, () => next(input)),
    };
    return { accepted, interceptor };
  }

  test('a start reported failed after Temporal accepted it: 503, no turn left in flight, no workflow left running', async () => {
    // The start reaches Temporal, and then the API hears an error (a lost response, a deadline), within the
    // time a POST waits for it.
    const { accepted, interceptor } = delayedStarts(0, true);
    const other = await svc.createUser();
    const own = await startApiWith(interceptor, 60_000);
    // With no worker, nothing but the API's own handling of the failure can end the workflow.
    await svc.stopWorker();
    try {
      const res = await api(own.url, 'POST', '/v1/turns', { key: other.apiKey, body: thanks });
      expect(res.status).toBe(503);
      expect(expectSchema(errorEnvelopeSchema, res.body).error.code).toBe('service_unavailable');
      const { rows } = await own.pool.query('SELECT id, status FROM turns WHERE user_id = $1', [other.userId]);
      expect(rows.filter((row) => row.status === 'queued' || row.status === 'running')).toEqual([]);
      expect(accepted).toHaveLength(1);
      const workflow = await svc.temporal.workflow.getHandle(accepted[0]).describe();
      expect(workflow.status.name).toBe('TERMINATED');
    } finally {
      await svc.startWorker();
      await own.close();
    }
  });

  test('a start that fails after the POST was answered 201: the turn fails with turn_abandoned on its stream, and no workflow is left running', async () => {
    const { accepted, interceptor } = delayedStarts(1_000, true);
    const other = await svc.createUser();
    const own = await startApiWith(interceptor, 0);
    await svc.stopWorker();
    try {
      const res = await api(own.url, 'POST', '/v1/turns', { key: other.apiKey, body: thanks });
      expect(res.status).toBe(201);
      const turn = expectSchema(turnSchema, res.body);
      expect(turn.status).toBe('queued');
      const stream = openEventStream(`${svc.url}/v1/turns/${turn.id}/events`, { apiKey: other.apiKey });
      try {
        const failed = await stream.waitFor((e) => e.type === 'turn.failed', BOUND_MS);
        expect(failed.data).toMatchObject({
          turn_id: turn.id,
          error: { code: 'turn_abandoned', message: 'The turn could not be started.' },
        });
        await within(stream.closedByServer, 'the stream closed');
      } finally {
        stream.close();
      }
      expect(await getTurn(svc, other.apiKey, turn.id)).toMatchObject({ status: 'failed' });
      expect(accepted).toEqual([turn.id]);
      expect((await svc.temporal.workflow.getHandle(turn.id).describe()).status.name).toBe('TERMINATED');
    } finally {
      await svc.startWorker();
      await own.close();
    }
  });

  test('a start still going when the POST is answered: the turn is queued meanwhile, and a cancellation waits for the start and cancels it', async () => {
    const { accepted, interceptor } = delayedStarts(2_000, false);
    const other = await svc.createUser();
    const own = await startApiWith(interceptor, 0);
    await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 20_000 });
    try {
      const res = await api(own.url, 'POST', '/v1/turns', { key: other.apiKey, body: thanks });
      expect(res.status).toBe(201);
      const id = expectSchema(turnSchema, res.body).id;
      // Answered before Temporal heard of the workflow; read meanwhile, the turn is queued, without progress.
      await expect(svc.temporal.workflow.getHandle(id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
      const meanwhile = await api(own.url, 'GET', `/v1/turns/${id}`, { key: other.apiKey });
      expect(meanwhile.status).toBe(200);
      expect(expectSchema(turnSchema, meanwhile.body)).toMatchObject({ status: 'queued' });
      expect(meanwhile.body).not.toHaveProperty('progress');
      const stream = openEventStream(`${svc.url}/v1/turns/${id}/events`, { apiKey: other.apiKey });
      try {
        const cancel = await api(own.url, 'POST', `/v1/turns/${id}/cancel`, { key: other.apiKey });
        expect(cancel.status).toBe(202);
        expect(accepted).toEqual([id]);
        const failed = await stream.waitFor((e) => e.type === 'turn.failed', BOUND_MS);
        expect(failed.data).toMatchObject({ turn_id: id, error: { code: 'cancelled' } });
        // Whether the workflow's first task ran before the cancellation reached it (turn.started first) or not
        // depends on timing; either way the workflow Temporal accepted ends the turn as cancelled.
        const closed = svc.temporal.workflow.getHandle(id).result();
        await within(
          closed.catch(() => undefined),
          'the workflow closed',
        );
        expect(await getTurn(svc, other.apiKey, id)).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
      } finally {
        stream.close();
      }
    } finally {
      svc.scripted.faults.clear(); // the slow reply is not reached when the cancellation comes first
      await own.close();
    }
  });
});

describe('with a run bound of 3 seconds', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startTestService({ env: { AMY_TURN_RUN_TIMEOUT_SECONDS: '3' } });
  });
  afterAll(async () => {
    await svc?.close();
  });

  test('a run past its bound is closed by Temporal, and the reconciler fails its turn', async () => {
    const user = await svc.createUser();
    await svc.scripted.faults.inject({ kind: 'slow', step: 'fallback_reply', times: 1, delay_ms: 20_000 });
    const id = (await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks })).body.id as string;
    await waitForStep(svc, user.apiKey, id, 'fallback_reply');
    // Temporal itself closes the run at its bound: the workflow's own failure handling never runs.
    const description = await svc.temporal.workflow.getHandle(id).describe();
    expect(description.raw.executionConfig?.workflowRunTimeout?.seconds?.toString()).toBe('3');
    await expect(within(svc.temporal.workflow.getHandle(id).result(), 'the run timed out')).rejects.toBeInstanceOf(
      WorkflowFailedError,
    );
    expect((await svc.temporal.workflow.getHandle(id).describe()).status.name).toBe('TIMED_OUT');
    await expectAbandoned(svc, user.apiKey, id, 'The turn ran past its time limit.');
  });
});
