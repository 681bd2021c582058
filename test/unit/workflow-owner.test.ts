/**
 * Whose a workflow's payloads are (platform/temporal/workflow-owner.ts), looked up from the turn row once
 * per turn and process, or told by the process that created the turn. The pool is a fake that answers from a map and counts its statements.
 */
import type { Pool } from 'pg';
import { createWorkflowOwners } from '../../platform/temporal/workflow-owner';

const TURN = 'turn_01JZ0000000000000000000000';
const ULID = '01JZ0000000000000000000000';

function fakePool(rows: Map<string, string>) {
  const pool = {
    statements: 0,
    query: (async (_text: string, values: string[]) => {
      pool.statements++;
      await new Promise((r) => setTimeout(r, 5));
      const userId = rows.get(values[0]);
      return { rows: userId ? [{ user_id: userId }] : [] };
    }) as unknown as Pool['query'],
  };
  return pool;
}

test("a turn's payloads are its user's, looked up once however many encodings ask at the same time", async () => {
  const pool = fakePool(new Map([[TURN, 'usr_1']]));
  const { ownerOf } = createWorkflowOwners(pool);
  const owners = await Promise.all([ownerOf(TURN), ownerOf(TURN), ownerOf(TURN)]);
  expect(owners).toEqual([{ userId: 'usr_1' }, { userId: 'usr_1' }, { userId: 'usr_1' }]);
  expect(await ownerOf(TURN)).toEqual({ userId: 'usr_1' });
  expect(pool.statements).toBe(1);
});

test('a turn without a row is orphaned, and asked again next time (its row may have been on its way)', async () => {
  const rows = new Map<string, string>();
  const pool = fakePool(rows);
  const { ownerOf } = createWorkflowOwners(pool);
  expect(await ownerOf(TURN)).toBe('orphaned_turn');
  rows.set(TURN, 'usr_2');
  expect(await ownerOf(TURN)).toEqual({ userId: 'usr_2' });
  expect(pool.statements).toBe(2);
});

test("the service's own workflows, known by their ids' forms, need no lookup", async () => {
  const pool = fakePool(new Map());
  const { ownerOf } = createWorkflowOwners(pool);
  expect(await ownerOf('amy-retention-run-2026-12-06T07:15:00Z')).toBe('service_workflow');
  expect(await ownerOf(`webhook:msg_${ULID}:we_${ULID}:2`)).toBe('service_workflow');
  expect(pool.statements).toBe(0);
});

test('any other id is a turn’s: without a row it has no owner, whatever it looks like', async () => {
  const pool = fakePool(new Map());
  const { ownerOf } = createWorkflowOwners(pool);
  for (const id of ['retention-sweep', 'amy-retention', `webhook:msg_${ULID}`, 'foo'])
    expect({ id, owner: await ownerOf(id) }).toEqual({ id, owner: 'orphaned_turn' });
  expect(pool.statements).toBe(4);
});

test('a turn this process has just created is its user’s without a lookup (the API, as it starts the workflow)', async () => {
  const pool = fakePool(new Map([[TURN, 'usr_3']]));
  const owners = createWorkflowOwners(pool);
  owners.rememberTurnOwner(TURN, 'usr_3');
  expect(await owners.ownerOf(TURN)).toEqual({ userId: 'usr_3' });
  expect(pool.statements).toBe(0);
});
