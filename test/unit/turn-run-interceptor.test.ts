/**
 * What every activity passes before it runs (worker/turn-run-interceptor.ts), whoever started its workflow: its
 * workflow runs under an id of its type, and a turn's activity acts for the turn's owner only. A refusal comes
 * before the step, and before the turn's run is entered: nothing is read or written. The owner lookup and the
 * pool are fakes; the pool counts its statements.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityExecuteInput, Next, ActivityInboundCallsInterceptor } from '@temporalio/worker';
import type { Pool } from 'pg';
import type { WorkflowOwners } from '../../platform/temporal/workflow-owner';
import type { EventLog } from '../../platform/event-log';
import { turnRunInterceptors } from '../../worker/turn-run-interceptor';

const TURN = 'turn_01JZ0000000000000000000000';
const OWNER = 'usr_owner';

function harness(info: { workflowType: string; workflowId: string; activityType?: string }) {
  const statements: string[] = [];
  const pool = {
    query: async (text: string) => {
      statements.push(text);
      // The turn's first run claims it (activities/bookkeeping/turn-attempts.ts).
      return { rowCount: 1, rows: [] };
    },
  } as unknown as Pool;
  const turnOwners: WorkflowOwners = {
    ownerOf: async (id) => (id === TURN ? { userId: OWNER } : 'orphaned_turn'),
    rememberTurnOwner: () => undefined,
  };
  const factory = turnRunInterceptors({ pool, events: {} as EventLog, clock: () => new Date(), turnOwners });
  const ctx = {
    info: {
      workflowType: info.workflowType,
      activityType: info.activityType ?? 'recallMemory',
      workflowExecution: { workflowId: info.workflowId, runId: 'run-1' },
    },
  } as unknown as Parameters<typeof factory>[0];
  const inbound = factory(ctx).inbound as Required<ActivityInboundCallsInterceptor>;
  let ran = 0;
  const next: Next<ActivityInboundCallsInterceptor, 'execute'> = async () => {
    ran++;
    return 'done';
  };
  return {
    statements,
    ran: () => ran,
    execute: (args: unknown[]) => inbound.execute({ args, headers: {} } as ActivityExecuteInput, next),
  };
}

async function refusal(promise: Promise<unknown>): Promise<{ type: string | null | undefined; nonRetryable: boolean }> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return { type: (err as ApplicationFailure).type, nonRetryable: (err as ApplicationFailure).nonRetryable === true };
}

test("a turn's activity for its owner enters the turn's run, then runs", async () => {
  const h = harness({ workflowType: 'TurnWorkflow', workflowId: TURN });
  await expect(h.execute([{ turnId: TURN, userId: OWNER, includeMemory: true }])).resolves.toBe('done');
  expect(h.ran()).toBe(1);
  expect(h.statements).toHaveLength(1);
});

test('an input naming another user is refused before anything is read or written', async () => {
  const h = harness({ workflowType: 'TurnWorkflow', workflowId: TURN });
  expect(await refusal(h.execute([{ userId: 'usr_victim', includeMemory: true }]))).toEqual({
    type: 'TurnOwnerMismatchError',
    nonRetryable: true,
  });
  expect({ ran: h.ran(), statements: h.statements }).toEqual({ ran: 0, statements: [] });
});

test('an input naming another turn is refused the same way', async () => {
  const h = harness({ workflowType: 'TurnWorkflow', workflowId: TURN, activityType: 'rememberTurn' });
  expect(await refusal(h.execute([{ turnId: 'turn_01JZ0000000000000000000001', userId: OWNER }]))).toEqual({
    type: 'TurnOwnerMismatchError',
    nonRetryable: true,
  });
  expect({ ran: h.ran(), statements: h.statements }).toEqual({ ran: 0, statements: [] });
});

test('a turn workflow on an id of another form, or a service workflow on a turn id, runs no activity', async () => {
  for (const [workflowType, workflowId] of [
    ['TurnWorkflow', 'amy-retention-run-2026-12-06T07:15:00Z'],
    ['TurnWorkflow', 'foo'],
    ['RetentionWorkflow', TURN],
    ['SomeOtherWorkflow', TURN],
  ]) {
    const h = harness({ workflowType, workflowId });
    expect({ workflowType, workflowId, ...(await refusal(h.execute([{}]))) }).toEqual({
      workflowType,
      workflowId,
      type: 'WorkflowIdRefusedError',
      nonRetryable: true,
    });
    expect({ ran: h.ran(), statements: h.statements }).toEqual({ ran: 0, statements: [] });
  }
});

test("a service workflow on its own id runs its activities, with no turn's check", async () => {
  const h = harness({ workflowType: 'RetentionWorkflow', workflowId: 'amy-retention-run-2026-12-06T07:15:00Z' });
  await expect(h.execute([{ olderThanSeconds: 3600 }])).resolves.toBe('done');
  expect(h.statements).toEqual([]);
});
