/**
 * Durability of the stream (invariant 4): the API process serving a live turn's SSE stream is
 * SIGKILLed, a new API process takes over the same address, and the client's own EventSource
 * reconnects with `Last-Event-Id`. The client ends up with every event of the turn exactly once and in
 * order: those written while no API was up are replayed from the log, the rest arrive live on the new
 * connection, and nothing is doubled or dropped at the replay→live cutover.
 */
import { Client, Pool } from 'pg';
import { freePort } from '../../dev/stack/ports';
import { createEventLog } from '../../platform/event-log';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard } from '../support/worker-process';

let svc: TestService;
let pool: Pool;
let port: number;
let apiProcess: ApiProcess | null = null;
let lock: Client | null = null;

beforeAll(async () => {
  // Paced deltas keep the reply streaming while the API dies. The worker stays in this process: only
  // the API is killed here (the suite's in-process API is not used).
  svc = await startTestService({ scripted: { streamChunkDelayMs: 150 } });
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
  port = await freePort();
  apiProcess = await spawnApiProcess(svc.config, port);
});
afterAll(async () => {
  await lock?.end().catch(() => undefined);
  if (apiProcess) await killHard(apiProcess.child);
  await pool?.end();
  await svc?.close();
});

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const storedLastId = async (turnId: string) =>
  (await pool.query<{ last_event_id: number }>('SELECT last_event_id FROM turns WHERE id = $1', [turnId])).rows[0]
    .last_event_id;

test('the API SIGKILLed mid-stream: the EventSource reconnects to a new API process with Last-Event-Id and gets every event exactly once, in order', async () => {
  const user = await svc.createUser();
  const created = await api(apiProcess!.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thanks a lot, that was a wonderful and very helpful explanation!' }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  const stream = openEventStream(`${apiProcess!.url}/v1/turns/${turnId}/events`, {
    apiKey: user.apiKey,
    reconnect: true,
  });

  await stream.waitFor((e) => e.type === 'agent.thought');
  await killHard(apiProcess!.child);
  apiProcess = null;
  await until(() => stream.drops() >= 1, 'the EventSource notices the dead connection');
  const lastSeen = stream.events[stream.events.length - 1].id;

  // Hold the worker's next append (every append locks the turn row) once the log has events this
  // client never saw, so the reconnection is sure to have some to replay and some still to come live.
  await until(async () => (await storedLastId(turnId)) > lastSeen, 'the worker writes events nobody streams');
  lock = new Client({ connectionString: svc.database.url });
  await lock.connect();
  await lock.query('BEGIN');
  const held = await lock.query<{ last_event_id: number; status: string }>(
    'SELECT last_event_id, status FROM turns WHERE id = $1 FOR UPDATE',
    [turnId],
  );
  const { last_event_id: heldAt, status } = held.rows[0];
  expect(status).toBe('running');

  apiProcess = await spawnApiProcess(svc.config, port);
  await stream.waitFor((e) => e.id === heldAt);
  await lock.query('COMMIT');
  await lock.end();
  lock = null;
  await stream.closedByServer;
  const events = stream.events;

  // Two streams opened: the first without Last-Event-ID, the reconnection with the last id received.
  expect(stream.connections).toHaveLength(2);
  const [first, second] = stream.connections;
  expect(first.lastEventId).toBeNull();
  const afterReconnect = events.slice(second.firstEvent);
  expect(second.lastEventId).toBe(String(lastSeen));
  expect(afterReconnect[0].id).toBe(lastSeen + 1);
  // The reconnection replayed what was written while no API was up, then tailed the rest live.
  expect(afterReconnect.filter((e) => e.id <= heldAt).length).toBeGreaterThan(0);
  expect(afterReconnect.filter((e) => e.id > heldAt).length).toBeGreaterThan(0);

  // Every event exactly once, in order, and exactly the stored log.
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const stored = await createEventLog(pool).readAfter(turnId, 0, 10_000);
  expect(events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(stored);
  expect(events[0].type).toBe('turn.started');
  expect(events.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed')).toHaveLength(1);
  expect(events[events.length - 1].type).toBe('turn.completed');

  // Only the API died: the step was not retried, and the deltas across both connections make the answer.
  expect(events.filter((e) => e.type === 'step.retry')).toHaveLength(0);
  const answer = (events[events.length - 1].data as { result: { answer: string } }).result.answer;
  const deltas = events.filter((e) => e.type === 'agent.thought' && e.data.agent === 'synthesis');
  expect(deltas.map((e) => e.data.delta).join('')).toBe(answer);
}, 90_000);
