/**
 * Slow and unauthenticated clients cannot hold the API's connections. Raw sockets
 * against the real API server, with its receive bounds made small through its configuration:
 *
 * - a body trickled without a key is answered 401 at once, before the body is read, and the connection
 *   closed;
 * - headers trickled forever, a keyed body trickled past the request timeout, and a keep-alive
 *   connection left idle are closed;
 * - and what legitimately lasts longer than those bounds is not cut: a blocking `"stream": false` turn
 *   and an SSE stream through a quiet step, both longer than the request timeout.
 *
 * The bounds asserted are generous multiples of the configured ones; before the fix, each wait here
 * would have lasted a minute or forever.
 */
import net from 'node:net';
import { errorEnvelopeSchema } from '../../contracts/errors';
import { turnSchema } from '../../contracts/turn';
import { api, expectSchema, thanks } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const KEEP_ALIVE_TIMEOUT_MS = 1_000;
/** Far above every configured bound (and the check interval), far below Node's defaults of 60 s or more. */
const CLOSED_WITHIN_MS = 15_000;

let svc: TestService;
let user: { userId: string; apiKey: string };
beforeAll(async () => {
  svc = await startTestService({
    env: {
      AMY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      AMY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      AMY_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    },
  });
  user = await svc.createUser();
}, 60_000);
afterAll(async () => {
  await svc?.close();
});

interface RawClient {
  socket: net.Socket;
  /** Everything the server sent. */
  received(): string;
  /** How many bytes of our trickle went out. */
  trickled(): number;
  /** Resolves when the connection is closed, or rejects after `CLOSED_WITHIN_MS`. */
  closed: Promise<void>;
}

/** Opens a socket, writes `head` at once, then one byte of `trickle` (if any) every `everyMs` while the socket is open. */
function rawClient(head: string, trickle: string, everyMs: number): RawClient {
  const { hostname, port } = new URL(svc.url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined); // a reset from the server's side is one way of being closed
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  let sent = 0;
  socket.write(head);
  const timer = setInterval(() => {
    if (!trickle || socket.destroyed || !socket.writable) return;
    socket.write(trickle[sent % trickle.length]);
    sent++;
  }, everyMs);
  const closed = new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      reject(
        new Error(`the server kept the connection open for ${CLOSED_WITHIN_MS} ms; it sent ${received.length} bytes`),
      );
    }, CLOSED_WITHIN_MS);
    socket.on('close', () => {
      clearTimeout(deadline);
      clearInterval(timer);
      resolve();
    });
  });
  return { socket, received: () => received, trickled: () => sent, closed };
}

function parseResponse(raw: string) {
  const [head, ...body] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.join('\r\n\r\n') };
}

const BODY_LENGTH = 1_000;

test('a body trickled without a key, one byte a second, is answered 401 before it is read, and the connection closed', async () => {
  const client = rawClient(
    `POST /v1/turns HTTP/1.1\r\nHost: amy\r\nContent-Type: application/json\r\nContent-Length: ${BODY_LENGTH}\r\n\r\n`,
    '{',
    1_000,
  );
  await client.closed;
  const res = parseResponse(client.received());
  expect(res.status).toBe(401);
  expect(res.headers.connection).toBe('close');
  const { error } = expectSchema(errorEnvelopeSchema, JSON.parse(res.body));
  expect(error.code).toBe('authentication_required');
  // Answered and closed while the body was still coming: the key was checked before any body was read.
  expect(client.trickled()).toBeLessThan(BODY_LENGTH);
});

test('headers trickled forever are cut after the headers timeout', async () => {
  const client = rawClient('GET /v1/turns HTTP/1.1\r\nHost: amy\r\nX-Slow: ', 'a', 200);
  await client.closed;
  expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
});

test('a keyed body trickled past the request timeout is cut, and starts no turn', async () => {
  const client = rawClient(
    `POST /v1/turns HTTP/1.1\r\nHost: amy\r\nAuthorization: Bearer ${user.apiKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${BODY_LENGTH}\r\n\r\n`,
    ' ',
    200,
  );
  await client.closed;
  expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
  expect(client.trickled()).toBeLessThan(BODY_LENGTH);
  expect(await svc.database.db.turn.count({ where: { userId: user.userId } })).toBe(0);
});

test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
  const client = rawClient('GET /healthz HTTP/1.1\r\nHost: amy\r\n\r\n', '', 60_000);
  await client.closed;
  const res = parseResponse(client.received());
  expect(res.status).toBe(200);
  expect(res.headers.connection).toBe('keep-alive');
});

test('a blocking turn and an SSE stream through a quiet step, both longer than the request timeout, are not cut', async () => {
  // The turn's first model call is held back twice the request timeout: no byte flows either way meanwhile.
  const quietMs = 2 * REQUEST_TIMEOUT_MS;
  svc.scripted.faults.inject({ kind: 'slow', delay_ms: quietMs, times: 1 });
  const startedAt = Date.now();
  const blocking = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: { ...thanks, stream: false } });
  expect(blocking.status).toBe(200);
  expect(expectSchema(turnSchema, blocking.body).status).toBe('completed');
  // It did last longer than the request timeout, so the bound was really in play.
  expect(Date.now() - startedAt).toBeGreaterThanOrEqual(quietMs);

  svc.scripted.faults.inject({ kind: 'slow', delay_ms: quietMs, times: 1 });
  const streamed = await api(svc.url, 'POST', '/v1/turns', { key: user.apiKey, body: thanks });
  expect(streamed.status).toBe(201);
  const stream = openEventStream(`${svc.url}/v1/turns/${streamed.body.id}/events`, { apiKey: user.apiKey });
  await stream.closedByServer;
  expect(stream.events.at(-1)?.type).toBe('turn.completed');
  expect(stream.events.map((e) => e.id)).toEqual(stream.events.map((_, i) => i + 1));
  expect(stream.drops()).toBe(1); // only the server's close after turn.completed
  expect(stream.connections).toHaveLength(1);
  expect(svc.scripted.faults.pending()).toEqual([]);
}, 60_000);
