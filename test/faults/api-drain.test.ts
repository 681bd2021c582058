/**
 * An API process told to stop (SIGTERM, as a deploy does) drains (docs/operations.md#deploying): it
 * stops listening at once (a new connection is refused), ends its open event streams cleanly with a
 * `retry:` hint so that their clients resume elsewhere, lets requests in flight finish within
 * AMY_SHUTDOWN_GRACE_SECONDS, answers a blocking turn still waiting after that with a retryable 503,
 * and exits 0. A second API process takes the address over, as a rolling deploy's next one would: the
 * SDK and a real EventSource resume there with Last-Event-Id and get every event exactly once.
 */
import net from 'node:net';
import { Amy, type TurnStreamEvent } from '@amy/sdk';
import { Pool } from 'pg';
import { freePort } from '../../dev/stack/ports';
import { createEventLog } from '../../platform/event-log';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';

jest.setTimeout(120_000);

let svc: TestService;
let pool: Pool;
const processes: ApiProcess[] = [];

beforeAll(async () => {
  // Paced deltas keep a turn's reply streaming for seconds while its API process stops. The worker
  // stays in this process: only API processes are stopped here.
  svc = await startTestService({ scripted: { streamChunkDelayMs: 500 } });
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  for (const p of processes) await p.kill();
  await pool?.end();
  await svc?.close();
});

async function startApi(port: number, graceSeconds: number) {
  const lines: string[] = [];
  const p = await spawnApiProcess(svc.config, port, {
    env: { AMY_SHUTDOWN_GRACE_SECONDS: String(graceSeconds) },
    onLine: (line) => lines.push(line),
  });
  processes.push(p);
  const logged = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 30_000;
      const look = () => {
        if (lines.some((line) => line.includes(text))) return resolve();
        if (Date.now() > deadline) return reject(new Error(`the API never logged "${text}"`));
        setTimeout(look, 20);
      };
      look();
    });
  return { ...p, lines, logged };
}

const THANKS = 'thanks a lot, that was a wonderful and very helpful explanation!';
const storedLog = async (turnId: string) => createEventLog(pool).readAfter(turnId, 0, 10_000);

async function collect(iterable: AsyncIterable<TurnStreamEvent>) {
  const events: TurnStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

/** The raw bytes of one connection to the stream, until the server ends it (or it breaks). */
async function readRawStream(url: string, apiKey: string, onFirstBytes: () => void) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, ended: 'cleanly' as const };
      text += decoder.decode(value, { stream: true });
      onFirstBytes();
    }
  } catch {
    return { text, ended: 'broken' as const };
  }
}

test('SIGTERM with open streams and a blocking request: streams end cleanly and resume on the next process exactly once, the blocking request is answered, new connections are refused, exit 0', async () => {
  const port = await freePort();
  const first = await startApi(port, 60);
  const user = await svc.createUser();
  const created = await api(first.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: THANKS }] },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  const eventsUrl = `${first.url}/v1/turns/${turnId}/events`;

  // Three readers of the live turn: the SDK, a real EventSource, and the raw bytes of one connection.
  const reconnects: Array<{ lastEventId: number; cause: unknown }> = [];
  const amy = new Amy({ apiKey: user.apiKey, baseUrl: first.url });
  const sdkEvents = collect(amy.turns.stream(turnId, { onReconnect: (_lastEventId, info) => reconnects.push(info) }));
  const eventSource = openEventStream(eventsUrl, { apiKey: user.apiKey, reconnect: true });
  let rawStarted!: () => void;
  const rawFlowing = new Promise<void>((resolve) => (rawStarted = resolve));
  const raw = readRawStream(eventsUrl, user.apiKey, () => rawStarted());
  // And a blocking request for another turn, which takes seconds.
  const blocking = api(first.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thank you so much, this is great!' }], stream: false },
    headers: { 'idempotency-key': 'drain-blocking-1' },
  });
  await eventSource.waitFor((e) => e.type === 'agent.thought');
  await rawFlowing;

  first.child.kill('SIGTERM');
  await first.logged('api draining');
  // A new connection is refused while the process still drains (the blocking request keeps it up).
  const refused = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve('connected')));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  expect(refused).toBe('ECONNREFUSED');
  expect(first.alive()).toBe(true);

  // The raw connection ended cleanly, its last bytes a reconnection hint and no event after it.
  const { text, ended } = await raw;
  expect(ended).toBe('cleanly');
  expect(text).toMatch(/\n\nretry: \d+\n\n$/);
  expect(text).not.toContain('turn.completed');

  // The next process takes the address over; every client resumes there.
  const second = await startApi(port, 60);
  const sdk = await sdkEvents;
  await eventSource.closedByServer;
  const stored = await storedLog(turnId);
  expect(stored[stored.length - 1].type).toBe('turn.completed');

  // The SDK: every event once, in order, exactly the stored log; it resumed after a clean end, not an error.
  expect(sdk.map(({ id, type }) => ({ id, type }))).toEqual(stored.map(({ id, type }) => ({ id, type })));
  expect(reconnects.length).toBeGreaterThanOrEqual(1);
  expect(String(reconnects[0].cause)).toContain('The stream closed before the turn ended');
  // The EventSource: one reconnection, with the last id it had, then the rest; nothing twice.
  expect(eventSource.connections).toHaveLength(2);
  const [, resumed] = eventSource.connections;
  const lastBeforeDrain = eventSource.events[resumed.firstEvent - 1].id;
  expect(resumed.lastEventId).toBe(String(lastBeforeDrain));
  expect(eventSource.events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(stored);

  // The blocking request was answered by the draining process, with its finished turn.
  const answered = await blocking;
  expect(answered.status).toBe(200);
  expect(answered.body.status).toBe('completed');
  expect(await first.exited).toEqual({ code: 0, signal: null });
  expect(first.lines.some((line) => line.includes('api stopped'))).toBe(true);

  await second.stop();
  expect(await second.exited).toEqual({ code: 0, signal: null });
});

test('a blocking request still waiting when the grace runs out: a retryable 503 naming the turn, which runs on; the SDK repeats it on the next process and gets the finished turn', async () => {
  const port = await freePort();
  const first = await startApi(port, 1);
  const user = await svc.createUser();
  const baseUrl = first.url;

  // One blocking request as the SDK sends it (it repeats a 503 with the same Idempotency-Key), one bare.
  const amy = new Amy({ apiKey: user.apiKey, baseUrl, maxRetries: 10, maxRetryDelayMs: 1000 });
  const viaSdk = amy.turns.create({ messages: [{ role: 'user', content: THANKS }], stream: false });
  const bare = api(baseUrl, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content: 'thank you so much, this is great!' }], stream: false },
  });
  // Both turns are running before the stop.
  const running = async () =>
    (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM turns WHERE user_id = $1 AND status = 'running'`,
        [user.userId],
      )
    ).rows[0].n;
  for (let deadline = Date.now() + 30_000; (await running()) < 2;) {
    if (Date.now() > deadline) throw new Error('the turns never started');
    await new Promise((r) => setTimeout(r, 50));
  }

  first.child.kill('SIGTERM');
  await first.logged('api draining');
  const second = await startApi(port, 60);

  const refusal = await bare;
  expect(refusal.status).toBe(503);
  expect(refusal.body.error.code).toBe('service_unavailable');
  expect(refusal.headers.get('retry-after')).toBe('1');
  const location = refusal.headers.get('location')!;
  expect(location).toMatch(/^\/v1\/turns\/turn_/);
  expect(refusal.body.error.message).toContain(location.split('/').pop());

  // The SDK's request was refused the same way, repeated, and answered by the next process.
  const finished = await viaSdk;
  expect(finished.status).toBe('completed');
  expect(await first.exited).toEqual({ code: 0, signal: null });

  // The refused turn ran on: the one it names completes.
  for (let deadline = Date.now() + 60_000; ;) {
    const turn = await api(second.url, 'GET', location, { key: user.apiKey });
    if (turn.body.status === 'completed') break;
    if (Date.now() > deadline) throw new Error(`the refused turn did not complete: ${turn.body.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await second.stop();
});
