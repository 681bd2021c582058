/**
 * The streaming protocol (docs/streaming.md) with a real EventSource client against the real service:
 * wire format, gapless ids, replay with Last-Event-Id, the replay→live cutover, close after the
 * terminal event, the replay window, and content negotiation.
 */
import { Pool } from 'pg';
import { eventDataSchemas, type TurnEventType } from '../../contracts/event-data';
import { turnSchema } from '../../contracts/turn';
import { createEventLog, type NewTurnEvent } from '../../platform/event-log';
import { api, expectSchema } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';

let svc: TestService;
let user: { userId: string; apiKey: string };
let pool: Pool;

beforeAll(async () => {
  // Paced token deltas keep a turn live long enough to disconnect and reconnect in the middle of it.
  svc = await startTestService({ scripted: { streamChunkDelayMs: 40 } });
  user = await svc.createUser();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await svc?.close();
});

const eventsUrl = (turnId: string) => `${svc.url}/v1/turns/${turnId}/events`;

async function startTurn(content = 'thanks!'): Promise<string> {
  const res = await api(svc.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: { messages: [{ role: 'user', content }] },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function storedEvents(turnId: string) {
  return createEventLog(pool).readAfter(turnId, 0, 10_000);
}

function expectWellFormedLog(events: ReceivedEvent[]) {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events[0].type).toBe('turn.started');
  expect(events[events.length - 1].type).toBe('turn.completed');
  expect(events.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed')).toHaveLength(1);
  for (const e of events) {
    expect(e.rawData).not.toContain('\n');
    expectSchema(eventDataSchemas[e.type as TurnEventType], e.data);
  }
}

test('a live turn streams every event once, ids from 1 without gaps, and the server closes after turn.completed', async () => {
  const turnId = await startTurn();
  const stream = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  await stream.closedByServer;
  expectWellFormedLog(stream.events);
  const types = stream.events.map((e) => e.type);
  expect(types).toEqual(
    expect.arrayContaining(['turn.started', 'agent.started', 'agent.thought', 'agent.completed', 'turn.completed']),
  );
  // The streamed reply concatenates to the answer.
  const answer = stream.events
    .filter((e) => e.type === 'agent.thought')
    .map((e) => e.data.delta)
    .join('');
  const completed = stream.events[stream.events.length - 1].data as { result: { answer: string } };
  expect(answer).toBe(completed.result.answer);
  expect(stream.events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(await storedEvents(turnId));
});

test('reconnecting with Last-Event-Id in the middle of a live turn yields every event exactly once, in order', async () => {
  const turnId = await startTurn('thank you so much, that was really helpful for my planning this week');
  const first = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  // The first delta, not a later one: deltas that arrive while an append is in flight are written as one
  // (activities/runtime/stream-agent-reply.ts), so on a busy machine a reply may take only a few events.
  await first.waitFor((e) => e.type === 'agent.thought');
  first.close();
  const seen = first.events.length;
  const lastId = first.events[seen - 1].id;
  expect(first.events.some((e) => e.type === 'turn.completed')).toBe(false);

  const second = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey, lastEventId: lastId });
  await second.closedByServer;
  expect(second.events[0].id).toBe(lastId + 1);
  const all = [...first.events, ...second.events];
  expectWellFormedLog(all);
  expect(all.map(({ id, type, data }) => ({ id, type, data }))).toEqual(await storedEvents(turnId));
});

test('Last-Event-Id on a finished turn replays only the later events, then closes', async () => {
  const turnId = await startTurn();
  await svc.temporal.workflow.getHandle(turnId).result();
  const stored = await storedEvents(turnId);
  const stream = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey, lastEventId: 3 });
  await stream.closedByServer;
  expect(stream.events.map((e) => e.id)).toEqual(stored.filter((e) => e.id > 3).map((e) => e.id));
});

/** A raw SSE request that resolves when the server ends the response; the old hang fails it after 5 s. */
async function fetchStream(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${user.apiKey}`, accept: 'text/event-stream', ...headers },
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
}

describe('a reconnect after the end (every native EventSource makes one) is answered with an empty stream, closed at once', () => {
  let turnId: string;
  let lastId: number;
  beforeAll(async () => {
    turnId = await startTurn();
    await svc.temporal.workflow.getHandle(turnId).result();
    lastId = (await storedEvents(turnId)).at(-1)!.id;
  });

  test.each([
    ['Last-Event-Id at the terminal event', () => fetchStream(eventsUrl(turnId), { 'last-event-id': String(lastId) })],
    ['Last-Event-Id past it', () => fetchStream(eventsUrl(turnId), { 'last-event-id': String(lastId + 5) })],
    ['?last_event_id= at the terminal event', () => fetchStream(`${eventsUrl(turnId)}?last_event_id=${lastId}`)],
  ])('%s', async (_name, reconnect) => {
    expect(await reconnect()).toEqual({
      status: 200,
      contentType: expect.stringMatching(/^text\/event-stream/),
      body: '',
    });
  });

  test('an ended turn whose terminal event is not written yet keeps the subscription and gets it when it lands', async () => {
    const other = await startTurn();
    await svc.temporal.workflow.getHandle(other).result();
    // Back to the moment between completeTurn's two writes: the row says completed, the log has no end yet.
    const terminal = (await storedEvents(other)).at(-1)!;
    expect(terminal.type).toBe('turn.completed');
    await pool.query('DELETE FROM turn_events WHERE turn_id = $1 AND id = $2', [other, terminal.id]);
    await pool.query('UPDATE turns SET last_event_id = $2 WHERE id = $1', [other, terminal.id - 1]);

    const stream = openEventStream(eventsUrl(other), { apiKey: user.apiKey, lastEventId: terminal.id - 1 });
    await stream.responseHeaders;
    await createEventLog(pool).append(other, [
      // The stored event written back as it was.
      { type: terminal.type, data: terminal.data, dedupeKey: 'turn.terminal' } as NewTurnEvent,
    ]);
    await stream.closedByServer;
    expect(stream.events.map(({ id, type, data }) => ({ id, type, data }))).toEqual([terminal]);
  });
});

test('a Last-Event-Id past the log of a running turn writes only the events after it, and the stream still ends with the turn', async () => {
  const turnId = await startTurn('thank you so much, that was really helpful for my planning this week');
  const watcher = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  const running = await watcher.waitFor((e) => e.type === 'agent.thought');
  // Ids the log has not reached: one a few events ahead, one beyond anything the turn will write.
  const nearId = running.id + 5;
  const near = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey, lastEventId: nearId });
  const far = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey, lastEventId: 999_999_999 });
  await Promise.all([near.responseHeaders, far.responseHeaders]);
  await watcher.closedByServer;
  // Both already have, or are about to get, the terminal event; before the fix they waited forever.
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('a stream ahead of the log outlived its turn')), 20_000);
  });
  await Promise.race([Promise.all([near.closedByServer, far.closedByServer]), bound]).finally(() =>
    clearTimeout(timer),
  );
  expect(far.events).toEqual([]);
  const stored = await storedEvents(turnId);
  expect(near.events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(stored.filter((e) => e.id > nearId));
  expect(stored.at(-1)!.type).toBe('turn.completed');
});

test('two parallel subscribers receive the same events', async () => {
  const turnId = await startTurn();
  const a = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  const b = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  await Promise.all([a.closedByServer, b.closedByServer]);
  expect(a.events.map((e) => e.id)).toEqual(b.events.map((e) => e.id));
  expect(a.events.length).toBeGreaterThan(3);
});

test('response headers: event-stream, no-cache, and an X-Request-Id per connection', async () => {
  const turnId = await startTurn();
  const a = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  const b = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  const [ha, hb] = await Promise.all([a.responseHeaders, b.responseHeaders]);
  expect(ha.get('content-type')).toMatch(/^text\/event-stream/);
  expect(ha.get('cache-control')).toBe('no-cache');
  expect(ha.get('x-request-id')).toMatch(/^req_/);
  expect(ha.get('x-request-id')).not.toBe(hb.get('x-request-id'));
  await Promise.all([a.closedByServer, b.closedByServer]);
});

test('the raw wire format: id, event, one data line, blank line; no comments', async () => {
  const turnId = await startTurn();
  await svc.temporal.workflow.getHandle(turnId).result();
  const res = await fetch(eventsUrl(turnId), {
    headers: { authorization: `Bearer ${user.apiKey}`, accept: 'text/event-stream' },
  });
  const text = await res.text(); // resolves because the server closes after the terminal event
  const blocks = text.split('\n\n').filter((b) => b !== '');
  expect(blocks.length).toBe((await storedEvents(turnId)).length);
  blocks.forEach((block, i) => {
    const lines = block.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`id: ${i + 1}`);
    expect(lines[1]).toMatch(/^event: [a-z_.]+$/);
    expect(lines[2]).toMatch(/^data: \{.*\}$/);
    expect(() => JSON.parse(lines[2].slice(6))).not.toThrow();
  });
  expect(text).not.toMatch(/^:/m);
});

test('without Accept: text/event-stream the endpoint returns the Turn snapshot as JSON', async () => {
  const turnId = await startTurn();
  await svc.temporal.workflow.getHandle(turnId).result();
  const res = await api(svc.url, 'GET', `/v1/turns/${turnId}/events`, {
    key: user.apiKey,
    headers: { accept: 'application/json' },
  });
  expect(res.status).toBe(200);
  expect(expectSchema(turnSchema, res.body).status).toBe('completed');
});

test('a malformed Last-Event-Id is a 400 invalid_field', async () => {
  const turnId = await startTurn();
  const res = await api(svc.url, 'GET', `/v1/turns/${turnId}/events`, {
    key: user.apiKey,
    headers: { accept: 'text/event-stream', 'last-event-id': 'abc' },
  });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('invalid_field');
  await svc.temporal.workflow.getHandle(turnId).result();
});

test('after the replay window the events are gone (404 turn_events_expired) while the turn stays readable', async () => {
  const turnId = await startTurn();
  await svc.temporal.workflow.getHandle(turnId).result();
  await pool.query(`UPDATE turns SET completed_at = now() - interval '61 minutes' WHERE id = $1`, [turnId]);
  const res = await api(svc.url, 'GET', `/v1/turns/${turnId}/events`, {
    key: user.apiKey,
    headers: { accept: 'text/event-stream' },
  });
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('turn_events_expired');
  expect((await api(svc.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey })).status).toBe(200);
});

test('a subscriber that connects before the first event still gets everything', async () => {
  // Block the worker so the turn is still queued when the stream opens.
  await svc.stopWorker();
  const turnId = await startTurn();
  const stream = openEventStream(eventsUrl(turnId), { apiKey: user.apiKey });
  await stream.responseHeaders;
  await svc.startWorker();
  await stream.closedByServer;
  expectWellFormedLog(stream.events);
});
