/**
 * Which answers the SDK's requests are repeated after, over real HTTP (a local node:http server and the
 * global fetch): a failure status is retried only for a request that is safe to send again (a read, a
 * delete, a cancellation, an upsert, a creation with its Idempotency-Key), and a 409 never is, whatever
 * the request: a conflict is the server's answer about the request itself, and it would answer it again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Amy, ConflictError, InternalServerError, RateLimitError, ServiceUnavailableError } from '@amy/sdk';

interface Received {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
}

/** Answers every request with the next status of `statuses` (the last one repeats): an error envelope, or the body for 2xx. */
async function serve(statuses: number[], okBody: unknown = {}) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)];
      const body =
        status < 400
          ? okBody
          : {
              error: { code: `status_${status}`, message: 'no', request_id: 'req_1', docs_url: 'https://docs/#x' },
            };
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const amy = new Amy({
    apiKey: 'amy_k',
    baseUrl: `http://127.0.0.1:${port}`,
    retryDelayMs: 1,
    maxRetryDelayMs: 5,
    maxRetries: 3,
  });
  return {
    amy,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const turn = { id: 'turn_01HX2K3M4N5P6Q7R8S9T0V1W2X', status: 'queued', last_event_id: 0 };
const memoryEntry = { text: 'Vegetarian.', category: 'preference' as const };

let api: Awaited<ReturnType<typeof serve>>;
afterEach(async () => {
  await api?.close();
});

describe('a failure status is retried only where repeating the request is safe', () => {
  test('a read is retried after 503 and 429', async () => {
    api = await serve([503, 429, 200], turn);
    expect(await api.amy.turns.get(turn.id)).toEqual(turn);
    expect(api.received.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });

  test('a creation is retried after 503, with the same Idempotency-Key', async () => {
    api = await serve([503, 201], turn);
    expect(await api.amy.turns.create({ messages: [{ role: 'user', content: 'hi' }] })).toEqual(turn);
    expect(api.received).toHaveLength(2);
    expect(api.received[0].idempotencyKey).toBeDefined();
    expect(api.received[1].idempotencyKey).toBe(api.received[0].idempotencyKey);
  });

  test('a POST without an Idempotency-Key (a memory write) is not repeated after a 5xx or a 429: it may have landed', async () => {
    for (const status of [500, 503, 429]) {
      api = await serve([status, 201], { id: 'mem_1' });
      const error = await api.amy.memory.create(memoryEntry).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(status === 429 ? RateLimitError : InternalServerError);
      if (status === 503) expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(api.received).toHaveLength(1);
      await api.close();
    }
  });

  test('a 409 is never retried: not a read, not a creation with its key, not a write', async () => {
    api = await serve([409, 200], turn);
    await expect(api.amy.turns.get(turn.id)).rejects.toBeInstanceOf(ConflictError);
    expect(api.received).toHaveLength(1);
    await api.close();

    api = await serve([409, 201], turn);
    await expect(api.amy.turns.create({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(api.received).toHaveLength(1);
    await api.close();

    api = await serve([409, 201], { id: 'mem_1' });
    await expect(api.amy.memory.create(memoryEntry)).rejects.toBeInstanceOf(ConflictError);
    expect(api.received).toHaveLength(1);
  });

  test('a delete and an upsert are safe to repeat, and are retried after a 5xx', async () => {
    api = await serve([502, 204]);
    await api.amy.memory.delete('mem_01');
    expect(api.received.map((r) => r.method)).toEqual(['DELETE', 'DELETE']);
    await api.close();

    api = await serve([500, 200], { inserted: 1, updated: 0 });
    await api.amy.data.daily.upsert([{ date: '2026-01-01', steps: 1000 }]);
    expect(api.received.map((r) => r.method)).toEqual(['POST', 'POST']);
  });
});
