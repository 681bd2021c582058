/**
 * Cancel racing completion: the workflow's completion (completeTurn) and its
 * failure (failTurn, as a cancellation arriving during the completion records it) end the same turn
 * against a real Postgres, interleaved statement by statement in every order the gates allow. Whoever
 * ends the turn, the row's status and the log's terminal event agree, the log has exactly one, and the
 * loser writes nothing: a completion that lost says so (TurnEndedError), so the workflow cannot
 * return an answer the row does not hold.
 */
import { Pool } from 'pg';
import { createTurnLifecycle } from '../../activities/bookkeeping/turn-lifecycle';
import { createEventLog } from '../../platform/event-log';
import { newId } from '../../platform/ids';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { interleave, SteppedWriter } from '../support/interleaving';

let t: TestDatabase;
let pool: Pool;
let observer: Pool;
let userId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  pool = new Pool({ connectionString: t.url, max: 6 });
  observer = new Pool({ connectionString: t.url, max: 1 });
  userId = newId('user');
  await pool.query('INSERT INTO users (id, name) VALUES ($1, $2)', [userId, 'racer']);
});
afterAll(async () => {
  await observer.end();
  await pool.end();
  await t.drop();
});

async function runningTurn(): Promise<string> {
  const turnId = newId('turn');
  await pool.query(
    `INSERT INTO turns (id, user_id, status, messages, context, started_at) VALUES ($1, $2, 'running', $3, $4, now())`,
    [turnId, userId, JSON.stringify([{ role: 'user', content: 'thanks!' }]), JSON.stringify({})],
  );
  return turnId;
}

const cancelled = { code: 'cancelled' as const, message: 'The turn was cancelled.', request_id: '', docs_url: 'x' };

function writer() {
  const stepped = new SteppedWriter(pool, observer);
  const lifecycle = createTurnLifecycle({
    pool: stepped.gatedPool,
    events: createEventLog(stepped.gatedPool),
    clock: () => new Date(),
  });
  return { stepped, lifecycle };
}

async function race(completionFirst: boolean, firstSteps: number, secondSteps: number) {
  const turnId = await runningTurn();
  const completion = writer();
  const failure = writer();
  completion.stepped.run(() =>
    completion.lifecycle.completeTurn({
      turnId,
      answer: 'You are welcome.',
      factSheet: [],
      agentsUsed: [],
      validator: { findings_total: 0, findings_validated: 0, findings_conditional: 0, findings_rejected: 0 },
    }),
  );
  failure.stepped.run(() => failure.lifecycle.failTurn({ turnId, error: cancelled }));
  const [first, second] = completionFirst ? [completion, failure] : [failure, completion];
  await interleave(first.stepped, second.stepped, firstSteps, secondSteps);

  const row = (await pool.query('SELECT status, result, error FROM turns WHERE id = $1', [turnId])).rows[0];
  const log = (await pool.query('SELECT id, type FROM turn_events WHERE turn_id = $1 ORDER BY id', [turnId])).rows;
  return { row, log, completed: completion.stepped.outcome!, failed: failure.stepped.outcome! };
}

test('completion and cancellation in every interleaving: the row and the last event agree, one terminal event', async () => {
  const seen = new Set<string>();
  for (const completionFirst of [true, false]) {
    for (let firstSteps = 0; firstSteps <= 12; firstSteps++) {
      for (let secondSteps = 0; secondSteps <= 12; secondSteps++) {
        const { row, log, completed, failed } = await race(completionFirst, firstSteps, secondSteps);
        const where = `${completionFirst ? 'completion' : 'cancellation'} first, ${firstSteps}+${secondSteps} statements`;
        const terminal = log.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed');
        expect({ where, terminal: terminal.map((e) => e.type) }).toEqual({
          where,
          terminal: [row.status === 'completed' ? 'turn.completed' : 'turn.failed'],
        });
        expect({ where, last: log.at(-1)?.type }).toEqual({ where, last: terminal[0].type });
        expect(failed.status).toBe('fulfilled');
        if (row.status === 'completed') {
          expect(completed).toMatchObject({ status: 'fulfilled', value: { answer: 'You are welcome.' } });
          expect(row.error).toBeNull();
        } else {
          expect({ where, completed }).toMatchObject({
            where,
            completed: { status: 'rejected', reason: { type: 'TurnEndedError', nonRetryable: true } },
          });
          expect(row).toMatchObject({ status: 'failed', result: null, error: { code: 'cancelled' } });
        }
        seen.add(row.status as string);
      }
    }
  }
  // Both outcomes occur: the schedules really did put each writer first.
  expect([...seen].sort()).toEqual(['completed', 'failed']);
});
