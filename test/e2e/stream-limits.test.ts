/**
 * Limits on event streams, against the real API over real sockets, on real Postgres
 * and Temporal: open streams per API key (one past the cap is `429 too_many_streams`, a closed stream
 * frees its slot, another key has its own count), and a reader that stops reading, which is dropped
 * once its unsent bytes pass the bound and resumes with Last-Event-Id, by hand and through the SDK.
 *
 * The turns here are rows and logs written straight into Postgres, so their size and their end are
 * the test's to choose; the API serves them as it serves any turn.
 */
import { once } from 'node:events';
import net from 'node:net';
import { Amy, type TurnStreamEvent } from '@amy/sdk';
import type { Logger } from '../../platform/logger';
import { startApiServer, type ApiServer } from '../../api/server';
import { formatSseEvent } from '../../api/streaming/sse-format';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { createEventLog, type NewTurnEvent } from '../../platform/event-log';
import { newId } from '../../platform/ids';
import { issueApiKey } from '../../platform/users';
import { expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';

const MAX_STREAMS = 3;
const MAX_BUFFERED = 64 * 1024;

let svc: TestService;
let api: ApiServer;
let user: { userId: string; apiKey: string };
const warnings: Array<{ msg: string; fields: Record<string, unknown> }> = [];

/** The API's warnings kept for the test to read: the drop's numbers are in its log line. */
const recordingLogger: Logger = {
  debug() {},
  info() {},
  warn: (msg, fields = {}) => void warnings.push({ msg, fields }),
  error() {},
};

beforeAll(async () => {
  svc = await startTestService();
  // An API of our own over the same database and Temporal, with small limits and a logger we can read.
  api = await startApiServer(
    { ...svc.config, AMY_MAX_STREAMS_PER_KEY: MAX_STREAMS, AMY_STREAM_MAX_BUFFERED_BYTES: MAX_BUFFERED },
    recordingLogger,
  );
  user = await svc.createUser();
}, 60_000);
afterAll(async () => {
  await api?.close();
  await svc?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const eventsUrl = (turnId: string) => `${api.url}/v1/turns/${turnId}/events`;

/** A running turn of the user, with no workflow behind it: its stream stays open until the test ends it. */
async function insertRunningTurn(userId: string): Promise<string> {
  const turnId = newId('turn');
  await svc.database.pool.query(
    `INSERT INTO turns (id, user_id, status, messages, context, started_at) VALUES ($1, $2, 'running', $3, $4, now())`,
    [
      turnId,
      userId,
      JSON.stringify([{ role: 'user', content: 'hi' }]),
      JSON.stringify({ include_memory: true, include_biomarkers: true }),
    ],
  );
  return turnId;
}

const thought = (n: number, chars: number): NewTurnEvent => ({
  type: 'agent.thought',
  // The number leads each delta, so a received event can be checked against the one written.
  data: { agent: 'synthesis', delta: `${n}:`.padEnd(chars, 'x'), attempt: 1, step: 'synthesis' },
});

async function appendThoughts(turnId: string, count: number, chars: number) {
  const log = createEventLog(svc.database.pool);
  for (let first = 1; first <= count; first += 100) {
    await log.append(
      turnId,
      Array.from({ length: Math.min(100, count - first + 1) }, (_, i) => thought(first + i, chars)),
    );
  }
}

/** Ends the turn as the workflow would: the terminal event, then the row. */
async function failTurn(turnId: string) {
  const error = { code: 'cancelled' as const, message: 'Cancelled.', request_id: 'req_test', docs_url: 'https://x' };
  await createEventLog(svc.database.pool).append(turnId, [
    { type: 'turn.failed', data: { turn_id: turnId, error, cost_usd: 0 }, dedupeKey: 'turn.terminal' },
  ]);
  await svc.database.pool.query(`UPDATE turns SET status = 'failed', error = $2, completed_at = now() WHERE id = $1`, [
    turnId,
    JSON.stringify(error),
  ]);
}

interface OpenedStream {
  status: number;
  headers: Headers;
  body(): Promise<unknown>;
  close(): void;
}

/** One request to the stream route; an open stream is left unread until close() drops it. */
async function requestStream(turnId: string, apiKey: string, accept = 'text/event-stream'): Promise<OpenedStream> {
  const abort = new AbortController();
  const res = await fetch(eventsUrl(turnId), {
    headers: { authorization: `Bearer ${apiKey}`, accept },
    signal: abort.signal,
  });
  return {
    status: res.status,
    headers: res.headers,
    body: () => res.json(),
    close: () => abort.abort(),
  };
}

function dropsOf(turnId: string) {
  return warnings.filter(
    (w) => w.msg === 'event stream dropped: the client is not reading' && w.fields.turn_id === turnId,
  );
}

async function waitForDrop(turnId: string, timeoutMs = 60_000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(50)) {
    const [drop] = dropsOf(turnId);
    if (drop) return drop.fields;
  }
  throw new Error(`the API dropped no stream of ${turnId} within ${timeoutMs} ms`);
}

test('one API key holds at most AMY_MAX_STREAMS_PER_KEY open streams: one more is a 429 in the envelope, a closed stream frees its slot, another key counts its own', async () => {
  // A user of its own: slots the other tests' closed streams still hold do not count here.
  const caller = await svc.createUser();
  const turnId = await insertRunningTurn(caller.userId);
  const secondKey = await issueApiKey(svc.database.pool, caller.userId);
  const open: OpenedStream[] = [];
  try {
    for (let i = 0; i < MAX_STREAMS; i++) open.push(await requestStream(turnId, caller.apiKey));
    expect(open.map((s) => s.status)).toEqual(Array(MAX_STREAMS).fill(200));

    const refused = await requestStream(turnId, caller.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    expect(refused.headers.get('retry-after')).toBe('5');
    const envelope = expectSchema(errorEnvelopeSchema, await refused.body());
    expect(envelope.error).toMatchObject({ code: 'too_many_streams', request_id: expect.stringMatching(/^req_/) });
    expect(envelope.error.message).toContain(String(MAX_STREAMS));

    // The route's JSON snapshot is no stream and takes no slot.
    const snapshot = await requestStream(turnId, caller.apiKey, 'application/json');
    expect(snapshot.status).toBe(200);
    await snapshot.body();

    // The same user's other key has a count of its own.
    const other = await requestStream(turnId, secondKey);
    expect(other.status).toBe(200);
    open.push(other);

    // A stream the client closes gives its slot back once the server has seen the close.
    open.shift()!.close();
    let reopened: OpenedStream | null = null;
    for (const deadline = Date.now() + 30_000; !reopened && Date.now() < deadline;) {
      const attempt = await requestStream(turnId, caller.apiKey);
      if (attempt.status === 200) reopened = attempt;
      else {
        expect(attempt.status).toBe(429);
        await attempt.body();
        await sleep(100);
      }
    }
    expect(reopened).not.toBeNull();
    open.push(reopened!);
    // And the cap holds again.
    const again = await requestStream(turnId, caller.apiKey);
    expect(again.status).toBe(429);
    await again.body();
  } finally {
    for (const s of open) s.close();
  }
});

test('a stream that ends with its turn gives its slot back', async () => {
  // A user of its own: slots the other tests' closed streams still hold do not count here.
  const caller = await svc.createUser();
  const turnIds = await Promise.all(Array.from({ length: MAX_STREAMS }, () => insertRunningTurn(caller.userId)));
  const streams = await Promise.all(
    turnIds.map(async (turnId) => {
      const res = await fetch(eventsUrl(turnId), {
        headers: { authorization: `Bearer ${caller.apiKey}`, accept: 'text/event-stream' },
      });
      // Wrapped, so that awaiting the stream's opening does not wait for its end.
      const text = res.text();
      text.catch(() => undefined); // a failed assertion above leaves it to be cut at teardown
      return { status: res.status, text };
    }),
  );
  expect(streams.map((s) => s.status)).toEqual(Array(MAX_STREAMS).fill(200));
  const refused = await requestStream(turnIds[0], caller.apiKey);
  expect(refused.status).toBe(429);
  await refused.body();

  // The server closes each stream after its turn's terminal event, and frees the slot as it does.
  for (const turnId of turnIds) await failTurn(turnId);
  for (const s of streams) expect(await s.text).toMatch(/event: turn\.failed\ndata: .*\n\n$/);
  const fresh = await insertRunningTurn(caller.userId);
  const reopened: OpenedStream[] = [];
  try {
    for (let i = 0; i < MAX_STREAMS; i++) reopened.push(await requestStream(fresh, caller.apiKey));
    expect(reopened.map((s) => s.status)).toEqual(Array(MAX_STREAMS).fill(200));
  } finally {
    for (const s of reopened) s.close();
  }
});

/** Complete SSE events in raw response bytes: each write is one chunk holding one whole event. */
function completeEvents(raw: string) {
  return [...raw.matchAll(/id: (\d+)\nevent: ([a-z_.]+)\ndata: (.*)\n\n/g)].map((m) => ({
    id: Number(m[1]),
    type: m[2],
    data: JSON.parse(m[3]) as { delta?: string },
  }));
}

/** Reads the stream after `lastId` until the terminal event, reconnecting whenever the API drops it. */
async function resumeUntilEnd(turnId: string, lastId: number) {
  const events: ReturnType<typeof completeEvents> = [];
  for (let connection = 0; connection < 200; connection++) {
    const res = await fetch(eventsUrl(turnId), {
      headers: { authorization: `Bearer ${user.apiKey}`, accept: 'text/event-stream', 'last-event-id': String(lastId) },
    });
    expect(res.status).toBe(200);
    const chunks: Uint8Array[] = [];
    const reader = res.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
    } catch {
      // Dropped: what arrived whole still counts, and the next connection resumes after it.
    }
    const got = completeEvents(Buffer.concat(chunks).toString('utf8'));
    events.push(...got);
    if (got.length > 0) lastId = got.at(-1)!.id;
    if (got.at(-1)?.type === 'turn.failed') return events;
  }
  throw new Error(`no end of ${turnId} after 200 connections`);
}

test('a reader that never reads is dropped once its unsent bytes pass the bound, with at most one event more buffered; it resumes with Last-Event-Id and gets the rest once', async () => {
  // 12 MB of events: far more than the kernel's socket buffers take for a reader that does not read.
  const COUNT = 1000;
  const CHARS = 12_000;
  const turnId = await insertRunningTurn(user.userId);
  await appendThoughts(turnId, COUNT, CHARS);

  const { port } = new URL(api.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.pause();
  socket.write(
    `GET /v1/turns/${turnId}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${user.apiKey}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  const drop = await waitForDrop(turnId);
  const largestEvent = Buffer.byteLength(formatSseEvent({ id: COUNT, ...thought(COUNT, CHARS) }));
  const chunkFraming = 16; // `<hex length>\r\n` … `\r\n` around each write
  expect(drop.max_buffered_bytes).toBe(MAX_BUFFERED);
  expect(drop.buffered_bytes).toBeGreaterThan(MAX_BUFFERED);
  expect(drop.buffered_bytes).toBeLessThanOrEqual(MAX_BUFFERED + largestEvent + chunkFraming);

  // What reached the client before the drop, then the end of the connection (the turn still runs).
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.resume();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    ended,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the connection was not closed')), 30_000))),
  ]).finally(() => clearTimeout(timer));
  const raw = Buffer.concat(chunks).toString('utf8');
  expect(raw).toMatch(/^HTTP\/1\.1 200/);
  const first = completeEvents(raw);
  expect(first.length).toBeGreaterThan(0);
  expect(first.length).toBeLessThan(COUNT);
  expect(first.map((e) => e.id)).toEqual(first.map((_, i) => i + 1));
  const lastSeen = first.at(-1)!.id;
  expect(drop.last_written_id).toBeGreaterThanOrEqual(lastSeen);

  // The turn ends; the client resumes after the last event it holds, as often as it is dropped.
  await failTurn(turnId);
  const all = [...first, ...(await resumeUntilEnd(turnId, lastSeen))];
  expect(all.map((e) => e.id)).toEqual(Array.from({ length: COUNT + 1 }, (_, i) => i + 1));
  expect(all.at(-1)!.type).toBe('turn.failed');
  for (const e of all.slice(0, COUNT)) expect(e.data.delta!.startsWith(`${e.id}:`)).toBe(true);
}, 120_000);

/**
 * A TCP proxy in front of the API whose first connection stops reading the API's answer until `resume`
 * settles, as a reader that falls behind does (the SDK's own fetch reads on into memory however slowly
 * its consumer takes events, so the stall is put on the path); later connections pass straight through.
 */
async function startStallingProxy(target: string, resume: Promise<unknown>) {
  const { hostname, port } = new URL(target);
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    if (++connections === 1) void resume.finally(() => upstream.pipe(client));
    else upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => connections,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('an SDK client whose connection stalls is dropped and resumes, and gets every event exactly once', async () => {
  // 12 MB: more than the kernel's socket buffers take while the path stalls.
  const COUNT = 3000;
  const CHARS = 4000;
  const turnId = await insertRunningTurn(user.userId);
  await appendThoughts(turnId, COUNT, CHARS);
  await failTurn(turnId);
  // The path stalls until the API has dropped the connection (or, without a bound, for 30 s).
  const proxy = await startStallingProxy(
    api.url,
    waitForDrop(turnId, 30_000).catch(() => undefined),
  );
  try {
    const amy = new Amy({ apiKey: user.apiKey, baseUrl: proxy.url, retryDelayMs: 20, maxRetryDelayMs: 250 });
    const received: TurnStreamEvent[] = [];
    let reconnects = 0;
    for await (const event of amy.turns.stream(turnId, { onReconnect: () => void reconnects++ })) {
      received.push(event);
    }
    expect(received.map((e) => e.id)).toEqual(Array.from({ length: COUNT + 1 }, (_, i) => i + 1));
    expect(received.at(-1)!.type).toBe('turn.failed');
    for (const e of received.slice(0, COUNT)) {
      expect(e.type === 'agent.thought' && e.delta.startsWith(`${e.id}:`)).toBe(true);
    }
    expect(dropsOf(turnId).length).toBeGreaterThan(0);
    expect(reconnects).toBeGreaterThan(0);
    expect(proxy.connections()).toBeGreaterThan(1);
  } finally {
    await proxy.close();
  }
}, 120_000);
