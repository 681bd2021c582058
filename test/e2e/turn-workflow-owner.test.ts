/**
 * A turn's workflow acts for its own user only, whoever starts it (docs/operations.md#encrypted-workflow-payloads).
 * Anyone who reaches Temporal's port (the Web UI's "Start Workflow", the `temporal` CLI) can start a workflow by
 * hand. Started on a failed turn's id with a plaintext input naming another user, the turn would read that
 * user's memory into itself and write memory entries for them. Here each such start, on a real Temporal with the
 * real worker and Postgres, is refused before its workflow runs a step, and writes nothing:
 *
 * - a plaintext input on a turn's id: the codec takes only what the service encrypted;
 * - an input sealed for another user (copied from their own turn's history): not the turn owner's key;
 * - a plaintext input on an id of the service's own workflows' form (whose payloads stay plain): a turn's
 *   workflow runs on a turn id only, so its first activity is refused.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { RETENTION_WORKFLOW_ID } from '../../platform/temporal/service-workflows';
import { TURN_WORKFLOW_TYPE, type TurnWorkflowInput } from '../../workflows/definitions';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import type { TurnHistory } from '../support/history';
import { readTestEnv } from '../support/test-env';

jest.setTimeout(180_000);

const MEMORY = 'Keeps bees on the roof of the Tromsø library.';

let svc: TestService;
let connection: Connection;
/** A client without the service's codec: what someone who reaches Temporal's port has. */
let bare: Client;

beforeAll(async () => {
  svc = await startTestService();
  connection = await Connection.connect({ address: readTestEnv().temporalAddress });
  bare = new Client({ connection });
});
afterAll(async () => {
  await connection?.close();
  await svc?.close();
});

/** What a start could have touched: the victim's memory, and the failed turn's row and log. */
async function footprint(victimId: string, turnId: string) {
  const { rows: memory } = await svc.database.pool.query(
    'SELECT id, text, category, source_turn_id FROM memory_entries WHERE user_id = $1 ORDER BY id',
    [victimId],
  );
  const { rows: turn } = await svc.database.pool.query(
    'SELECT status, attempt, run_ids, last_event_id, error FROM turns WHERE id = $1',
    [turnId],
  );
  const { rows: events } = await svc.database.pool.query(
    'SELECT count(*)::int AS n FROM turn_events WHERE turn_id = $1',
    [turnId],
  );
  const { rows: turns } = await svc.database.pool.query('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [
    victimId,
  ]);
  return { memory, turn, events: events[0].n, victimTurns: turns[0].n };
}

/** A user of their own whose turn failed: every attempt of its first model step answered 500. */
async function failedTurn(key: string): Promise<string> {
  svc.scripted.faults.inject({ kind: 'server_error', step: 'classify_vagueness', times: 4 });
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key,
    body: { messages: [{ role: 'user', content: 'thanks!' }], stream: false },
  });
  expect(res.body.status).toBe('failed');
  return res.body.id as string;
}

async function rawHistory(workflowId: string, runId: string): Promise<TurnHistory> {
  return bare.workflow.getHandle(workflowId, runId).fetchHistory();
}

/** Waits for the run's first workflow task to fail, and returns why (the failure as the worker reported it). */
async function firstTaskFailure(workflowId: string, runId: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = (await rawHistory(workflowId, runId)).events ?? [];
    const failed = events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes;
    if (failed) return failureText(failed.failure);
    if (Date.now() > deadline) throw new Error(`no workflow task of ${workflowId} failed`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A failure's message, from its encoded attributes when the worker put it there (never encrypted without a context). */
function failureText(failure: temporal.api.failure.v1.IFailure | null | undefined): string {
  const encoded = failure?.encodedAttributes?.data;
  const message = encoded ? (JSON.parse(Buffer.from(encoded).toString('utf8')) as { message: string }).message : '';
  return `${failure?.message ?? ''} ${message}`;
}

const scheduledActivities = async (workflowId: string, runId: string) =>
  ((await rawHistory(workflowId, runId)).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);

describe('a turn workflow started by hand, for another user', () => {
  let owner: { userId: string; apiKey: string };
  let victim: { userId: string; apiKey: string };
  let turnId: string;

  beforeAll(async () => {
    owner = await svc.createUser();
    victim = await svc.createUser();
    const created = await api(svc.url, 'POST', '/v1/memory', {
      key: victim.apiKey,
      body: { text: MEMORY, category: 'history' },
    });
    expect(created.status).toBe(201);
    turnId = await failedTurn(owner.apiKey);
  });

  const input = (workflowTurnId: string): TurnWorkflowInput => ({
    turnId: workflowTurnId,
    userId: victim.userId,
    messages: [{ role: 'user', content: 'Remember that I moved to Oslo. What do you know about me?' }],
    context: { include_memory: true, include_biomarkers: true },
  });

  test('with a plaintext input on the failed turn: refused by the codec before a step runs, nothing written', async () => {
    const before = await footprint(victim.userId, turnId);
    const handle = await bare.workflow.start(TURN_WORKFLOW_TYPE, {
      workflowId: turnId,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [input(turnId)],
    });
    try {
      expect(await firstTaskFailure(turnId, handle.firstExecutionRunId)).toMatch(/PayloadRefusedError|not encrypted/);
      expect(await scheduledActivities(turnId, handle.firstExecutionRunId)).toEqual([]);
      expect(await footprint(victim.userId, turnId)).toEqual(before);
    } finally {
      await handle.terminate('test over').catch(() => undefined);
    }
  });

  test("with an input sealed for the victim, copied from their own turn's history: not the turn owner's key, refused", async () => {
    const own = await api(svc.url, 'POST', '/v1/turns', {
      key: victim.apiKey,
      body: { messages: [{ role: 'user', content: 'thanks!' }], stream: false },
    });
    expect(own.body.status).toBe('completed');
    const victimsStart = ((await bare.workflow.getHandle(own.body.id).fetchHistory()).events ?? [])[0]
      .workflowExecutionStartedEventAttributes!.input!;
    const before = await footprint(victim.userId, turnId);
    const started = await bare.workflowService.startWorkflowExecution({
      namespace: svc.config.TEMPORAL_NAMESPACE,
      workflowId: turnId,
      workflowType: { name: TURN_WORKFLOW_TYPE },
      taskQueue: { name: svc.config.TEMPORAL_TASK_QUEUE },
      input: victimsStart,
      requestId: `copied-${Date.now()}`,
    });
    try {
      expect(await firstTaskFailure(turnId, started.runId!)).toMatch(/PayloadRefusedError|not its user's/);
      expect(await scheduledActivities(turnId, started.runId!)).toEqual([]);
      expect(await footprint(victim.userId, turnId)).toEqual(before);
    } finally {
      await bare.workflow
        .getHandle(turnId, started.runId!)
        .terminate('test over')
        .catch(() => undefined);
    }
  });

  test("on a service workflow's id, whose payloads stay plain: its first activity is refused, nothing written", async () => {
    const workflowId = `${RETENTION_WORKFLOW_ID}-${Date.now()}`;
    const before = await footprint(victim.userId, turnId);
    const handle = await bare.workflow.start(TURN_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [input(workflowId)],
    });
    await expect(handle.result()).rejects.toThrow();
    const events = (await rawHistory(workflowId, handle.firstExecutionRunId)).events ?? [];
    const failures = events.flatMap((e) => e.activityTaskFailedEventAttributes?.failure ?? []);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure.applicationFailureInfo).toMatchObject({ type: 'WorkflowIdRefusedError', nonRetryable: true });
    }
    expect(await footprint(victim.userId, turnId)).toEqual(before);
  });
});
