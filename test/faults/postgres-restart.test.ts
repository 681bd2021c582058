/**
 * Durability against the database: Postgres is shut down in the middle of a streamed step and started
 * again a couple of seconds later. The step whose writes failed is retried, the turn completes, the
 * event log stays gapless with no deterministic event doubled, and an SSE client that stayed connected
 * through the restart gets every event (the API's LISTEN connection dies with Postgres, so its event hub
 * must reconnect and catch up from the log). Neither the worker nor the API process may crash.
 *
 * The suite runs on a cluster of its own (the shared one must not be restarted), with the worker and
 * the API as real child processes, so an unhandled 'error' from a dropped connection would show.
 */
import type { ChildProcess } from 'node:child_process';
import { Client, Pool } from 'pg';
import { freePort } from '../../dev/stack/ports';
import { createEventLog } from '../../platform/event-log';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api } from '../support/http';
import { startRestartablePostgres, type RestartablePostgres } from '../support/restartable-postgres';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

let pg: RestartablePostgres;
let svc: TestService;
let worker: ChildProcess | null = null;
let apiProcess: ApiProcess | null = null;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  svc = await startTestService({ databaseUrl: pg.url, scripted: { streamChunkDelayMs: 150 } });
  await svc.stopWorker(); // this suite's worker and API are real processes
  const port = await freePort();
  [worker, apiProcess] = await Promise.all([spawnWorkerProcess(svc.config), spawnApiProcess(svc.config, port)]);
}, 120_000);
afterAll(async () => {
  if (worker) await killHard(worker);
  if (apiProcess) await killHard(apiProcess.child);
  await svc?.close();
  await pg?.destroy();
});

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('Postgres restarted mid-stream: the failed step is retried, the turn completes, and neither the log nor a connected client loses or doubles an event', async () => {
  const user = await svc.createUser();
  const created = await api(apiProcess!.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks a lot, that was a wonderful and very helpful explanation!' }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  const stream = openEventStream(`${apiProcess!.url}/v1/turns/${turnId}/events`, { apiKey: user.apiKey });

  // The first delta is on the wire and more follow every 150 ms. Pin both processes in the middle of a
  // transaction when Postgres goes away: rows locked here make the worker's next event append wait on
  // the turn row and a second POST /v1/turns wait on the user row (in create_queued_turn, one statement in
  // autocommit), each on a client of its pool. That is where a dropped connection, unheard, would escape as
  // an unhandled 'error' and kill the process.
  await stream.waitFor((e) => e.type === 'agent.thought');
  const lock = new Client({ connectionString: pg.url });
  lock.on('error', () => undefined); // terminated by the shutdown, like every session
  await lock.connect();
  await lock.query('BEGIN');
  await lock.query('SELECT 1 FROM turns WHERE id = $1 FOR UPDATE', [turnId]);
  await lock.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [user.userId]);
  const secondTurn = api(apiProcess!.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks again!' }] },
  });
  const { rows: locker } = await lock.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  // Watched from another session: inside the lock's transaction pg_stat_activity is a frozen snapshot.
  const watcher = new Client({ connectionString: pg.url });
  await watcher.connect();
  // By what they wait in: the worker may have more than one session on the turn row, and counting
  // sessions alone once let the restart come before the second POST reached its lock (it then got 201).
  let creating: number[] = [];
  await until(async () => {
    const { rows } = await watcher.query<{ pid: number; query: string }>(
      'SELECT pid, query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
      [locker[0].pid],
    );
    creating = rows.filter((r) => /create_queued_turn/.test(r.query)).map((r) => r.pid);
    return creating.length >= 1 && rows.length - creating.length >= 1;
  }, 'the worker and the API both wait on the locked rows');
  // The creation is one statement: had the shutdown ended the lock's session before the POST's, the POST
  // would get the lock and commit in the moment between. Its session is ended first, as the shutdown ends
  // it (57P01, the connection closed under the query in flight).
  await watcher.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [creating]);
  await watcher.end();

  await pg.stop();
  await lock.end().catch(() => undefined);
  await new Promise((r) => setTimeout(r, 2_000));
  await pg.start();

  // Both processes lived through it; the request caught by the restart got an error in the envelope.
  expect(alive(worker!)).toBe(true);
  expect(apiProcess!.alive()).toBe(true);
  const refused = await secondTurn;
  expect(refused.status).toBe(500);
  expect(refused.body.error.code).toBe('internal_error');
  // The stream is the API process's: it stayed open through the restart and ends after the terminal event.
  await stream.closedByServer;
  const events = stream.events;
  // ...and through the recovery that followed.
  expect(alive(worker!)).toBe(true);
  expect(apiProcess!.alive()).toBe(true);

  // Gapless from 1, exactly the stored log, one turn.started first and one terminal event last.
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const pool = new Pool({ connectionString: pg.url, max: 1 });
  try {
    const stored = await createEventLog(pool).readAfter(turnId, 0, 10_000);
    expect(events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(stored);
  } finally {
    await pool.end();
  }
  const count = (type: string) => events.filter((e) => e.type === type).length;
  expect(count('turn.started')).toBe(1);
  expect(events[0].type).toBe('turn.started');
  expect(count('turn.completed') + count('turn.failed')).toBe(1);
  expect(events[events.length - 1].type).toBe('turn.completed');

  // Deterministic events once per agent, however many attempts the reply took.
  const agents = (type: string) => events.filter((e) => e.type === type).map((e) => e.data.agent);
  expect(agents('agent.started')).toEqual(['synthesis', 'memory']);
  expect(agents('agent.completed')).toEqual(['synthesis', 'memory']);

  // The reply step failed with Postgres and was retried; the retry is announced, and each attempt went on from
  // what the ones before had shown: every delta, concatenated, is the answer.
  const thoughts = events.filter((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis');
  const lastAttempt = Math.max(...thoughts.map((e) => e.data.attempt as number));
  expect(lastAttempt).toBeGreaterThan(1);
  expect(thoughts.some((e) => e.data.attempt === 1)).toBe(true);
  const retries = events.filter((e) => e.type === 'step.retry');
  expect(retries.map((e) => e.data.step)).toEqual(retries.map(() => 'fallback_reply'));
  expect(retries.map((e) => e.data.attempt)).toContain(lastAttempt);
  const answer = (events[events.length - 1].data as { result: { answer: string } }).result.answer;
  expect(thoughts.map((e) => e.data.delta).join('')).toBe(answer);

  // Steps that finished before the restart did not run again.
  const calls = await svc.database.db.llmCall.findMany({ where: { turnId } });
  expect(calls.filter((c) => c.step === 'classify_vagueness')).toHaveLength(1);
  expect(calls.filter((c) => c.step === 'route')).toHaveLength(1);
  // The reply's model calls: one per attempt, the last one answered. (An attempt whose call finished before the
  // log's failure reached it is billed as a success too: the model did answer it.)
  const replies = calls.filter((c) => c.step === 'fallback_reply');
  expect(new Set(replies.map((c) => c.attempt)).size).toBe(replies.length);
  expect(replies.find((c) => c.attempt === lastAttempt)?.outcome).toBe('success');

  const turn = await api(apiProcess!.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  expect(turn.body.status).toBe('completed');
  // The attempt cut short by the restart is billed too: its ledger row could not be written while
  // Postgres was down, waited in the worker's memory, and went in with the next call's.
  // (Its call may have finished first, the reply held back sentence by sentence: then it is billed as answered.)
  expect(calls.some((c) => c.step === 'fallback_reply' && c.attempt === 1)).toBe(true);
  const billed = calls.reduce((sum, c) => sum + c.costUsd.toNumber(), 0);
  expect(turn.body.result.cost_usd).toBeCloseTo(billed, 6);
  // The refused POST's transaction died with the server: it created nothing.
  expect(await svc.database.db.turn.count({ where: { userId: user.userId } })).toBe(1);
}, 90_000);
