/**
 * A cancellation arriving while the turn's completion is being recorded, through
 * the real API, a real worker, Temporal and Postgres. Barriers, not sleeps, put the two writers in the
 * order that broke the old code: the worker holds `completeTurn` until the test lets it go; the test
 * holds the turn row's lock while the cancellation's `failTurn` and then the completion queue up
 * behind it (read from pg_locks); then it lets both go. The row and the stream's last event agree,
 * every time, and the turn has exactly one terminal event.
 */
import { NativeConnection, Worker, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { workflowTracingSinks } from '../../platform/temporal/tracing';
import { turnSchema } from '../../contracts/turn';
import { createStepDeps } from '../../worker/dependencies';
import { turnRunInterceptors } from '../../worker/turn-run-interceptor';
import { api, expectSchema, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { readTestEnv } from '../support/test-env';

const ITERATIONS = 6;

let svc: TestService;
let user: { userId: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService();
  user = await svc.createUser();
  // Only the test's worker, with its barrier, runs the turns below.
  await svc.stopWorker();
});
afterAll(async () => {
  await svc?.close();
});

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Per turn: when its completion reached the worker, the gate that lets it run, and when it ended. */
interface HeldCompletion {
  arrived: Deferred;
  gate: Deferred;
  ended: Deferred;
}
const held = new Map<string, HeldCompletion>();

function holdFor(turnId: string): HeldCompletion {
  const hold = { arrived: deferred(), gate: deferred(), ended: deferred() };
  held.set(turnId, hold);
  return hold;
}

const holdCompletion: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const hold =
        ctx.info.activityType === 'completeTurn' ? held.get(ctx.info.workflowExecution?.workflowId ?? '') : undefined;
      if (!hold) return next(input);
      hold.arrived.resolve();
      await hold.gate.promise;
      try {
        return await next(input);
      } finally {
        hold.ended.resolve();
      }
    },
  },
});

/** Until `count` sessions of this database wait for a lock. */
async function lockWaiters(count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await svc.database.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE NOT l.granted AND a.datname = current_database()`,
    );
    if (res.rows[0].n >= count) return;
    if (Date.now() > deadline) throw new Error(`${count} lock waiters never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('cancel while the completion is recorded: the row and the last event agree, every time', async () => {
  const deps = createStepDeps(svc.config);
  const connection = await NativeConnection.connect({ address: svc.config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: svc.config.TEMPORAL_NAMESPACE,
    taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
    activities: createActivities(deps),
    dataConverter: deps.dataConverter,
    interceptors: { activity: [turnRunInterceptors(deps), holdCompletion] },
    workflowBundle: { codePath: readTestEnv().workflowBundlePath },
    sinks: workflowTracingSinks(),
  });
  const running = worker.run();
  try {
    for (let i = 0; i < ITERATIONS; i++) {
      const created = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const hold = holdFor(id);
      await hold.arrived.promise;

      const locker = await svc.database.pool.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM turns WHERE id = $1 FOR UPDATE', [id]);
        const cancel = await api(svc.url, 'POST', `/v1/turns/${id}/cancel`, { key: user.apiKey });
        expect(cancel.status).toBe(202);
        await lockWaiters(1); // the cancellation's failTurn
        hold.gate.resolve();
        await lockWaiters(2); // and the completion, which has read the turn as running
        await locker.query('COMMIT');
      } finally {
        locker.release();
      }
      await svc.temporal.workflow
        .getHandle(id)
        .result()
        .catch(() => undefined);
      await hold.ended.promise;

      const turn = expectSchema(turnSchema, (await api(svc.url, 'GET', `/v1/turns/${id}`, { key: user.apiKey })).body);
      const log = await svc.database.pool.query<{ type: string }>(
        'SELECT type FROM turn_events WHERE turn_id = $1 ORDER BY id',
        [id],
      );
      const terminal = log.rows
        .map((e) => e.type)
        .filter((type) => type === 'turn.completed' || type === 'turn.failed');
      expect({ iteration: i, status: turn.status, terminal }).toEqual({
        iteration: i,
        status: turn.status,
        terminal: [turn.status === 'completed' ? 'turn.completed' : 'turn.failed'],
      });
      expect(log.rows.at(-1)?.type).toBe(terminal[0]);
      // The cancellation queued first, so it ends the turn; the completion writes nothing.
      expect(turn).toMatchObject({ status: 'failed', error: { code: 'cancelled' }, result: null });
    }
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await deps.close();
  }
  // completeTurn is a local activity (workflows/activity-proxies.ts): while the barrier holds it, the cancellation
  // reaches the workflow only when Temporal's core heartbeats the workflow task (at 80 % of its 10 s
  // timeout), so each iteration takes about 8 s.
}, 180_000);
