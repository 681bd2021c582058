/**
 * `amy.turns.stream()` as a client team relies on it, against a scripted API at the fetch boundary:
 * exactly-once delivery across dropped connections, a terminal event that always arrives, backoff per
 * outage, the idle watchdog, detach ≠ cancel, no leaked listeners, and the EventSource transport.
 */
import { getEventListeners } from 'node:events';
import {
  Amy,
  APIUserAbortError,
  AuthenticationError,
  NotFoundError,
  StreamDisconnectedError,
  TurnFailedError,
  type EventSourceConstructor,
  type EventSourceEvent,
  type ReconnectInfo,
  type TurnStreamEvent,
} from '@amy/sdk';
import { fakeApi, formatEvent, json, TURN_ID, turnLog, type ConnectionPlan, type LogEvent } from './fake-api';

const log = turnLog(['Your ', 'average ', 'resting ', 'heart ', 'rate ', 'is ', '58 ', 'bpm.']);
const ids = (events: TurnStreamEvent[]) => events.map((e) => e.id);
const oneToN = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

function client(fetch: ReturnType<typeof fakeApi>['fetch'], extra: Partial<ConstructorParameters<typeof Amy>[0]> = {}) {
  return new Amy({
    apiKey: 'amy_test_key',
    baseUrl: 'http://api.test',
    fetch,
    retryDelayMs: 1,
    maxRetryDelayMs: 5,
    ...extra,
  });
}

async function collect(iterable: AsyncIterable<TurnStreamEvent>): Promise<TurnStreamEvent[]> {
  const out: TurnStreamEvent[] = [];
  for await (const event of iterable) out.push(event);
  return out;
}

describe('exactly once, in order', () => {
  test('one connection: every event once, typed as { id, type, ...fields }, and the stream ends after turn.completed', async () => {
    const api = fakeApi(log, [{}]);
    const events = await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(ids(events)).toEqual(oneToN(log.length));
    expect(events[2]).toEqual({
      id: 3,
      type: 'agent.thought',
      agent: 'synthesis',
      delta: 'Your ',
      attempt: 1,
      step: 'synthesis',
    });
    expect(events[events.length - 1].type).toBe('turn.completed');
    expect(api.streamRequests()).toHaveLength(1);
    const headers = api.streamRequests()[0].headers;
    expect(headers.get('accept')).toBe('text/event-stream');
    expect(headers.get('authorization')).toBe('Bearer amy_test_key');
    expect(headers.get('last-event-id')).toBeNull();
  });

  test('connections cut after every event, mid-frame and between the last delta and the terminal event: every event once, resuming with Last-Event-Id', async () => {
    const plans: ConnectionPlan[] = [
      { events: 2, then: 'error' },
      { events: 1, partialBytes: 17, then: 'error' },
      { events: 0, partialBytes: 3, then: 'close' },
      { events: log.length - 4, then: 'error' }, // stops right before turn.completed
      {},
    ];
    const api = fakeApi(log, plans);
    const reconnects: ReconnectInfo[] = [];
    const lastIds: number[] = [];
    const events = await collect(
      client(api.fetch).turns.stream(TURN_ID, {
        // The contract's form: the last id first, the details after it.
        onReconnect: (lastId, info) => {
          lastIds.push(lastId);
          reconnects.push(info);
        },
      }),
    );
    expect(ids(events)).toEqual(oneToN(log.length));
    expect(api.streamRequests().map((r) => r.headers.get('last-event-id'))).toEqual([
      null,
      '2',
      '3',
      '3',
      String(log.length - 1),
    ]);
    expect(lastIds).toEqual([2, 3, 3, log.length - 1]);
    expect(reconnects.map((r) => r.lastEventId)).toEqual(lastIds);
    // The count of failures in a row starts over whenever an event arrives.
    expect(reconnects.map((r) => r.attempt)).toEqual([1, 1, 2, 1]);
  });

  test('events a server repeats after a reconnection are dropped, not yielded twice', async () => {
    const api = fakeApi(log, [{ events: 5, then: 'error' }, { replayFrom: 1 }]);
    const events = await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(ids(events)).toEqual(oneToN(log.length));
  });

  test('lastEventId resumes after a known event', async () => {
    const api = fakeApi(log, [{}]);
    const events = await collect(client(api.fetch).turns.stream(TURN_ID, { lastEventId: 6 }));
    expect(ids(events)).toEqual(oneToN(log.length).filter((id) => id > 6));
    expect(api.streamRequests()[0].headers.get('last-event-id')).toBe('6');
  });
});

describe('the terminal event always arrives', () => {
  test('a connection that closes cleanly without the terminal event is a disconnect, not the end', async () => {
    const api = fakeApi(log, [{ events: 4, then: 'close' }, {}]);
    const events = await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(events[events.length - 1].type).toBe('turn.completed');
    expect(api.streamRequests()).toHaveLength(2);
  });

  test('after the replay window, the terminal event comes from the stored Turn, marked as a snapshot', async () => {
    const completed = log[log.length - 1].data as { result: Record<string, unknown> };
    const api = fakeApi(
      log,
      [
        { events: 3, then: 'error' },
        { status: 404, code: 'turn_events_expired' },
      ],
      {
        [`GET /v1/turns/${TURN_ID}`]: () =>
          json({
            id: TURN_ID,
            status: 'completed',
            result: completed.result,
            error: null,
            last_event_id: log.length,
            cost_usd: 0.001,
          }),
      },
    );
    const events = await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(ids(events)).toEqual([1, 2, 3, log.length]);
    expect(events[3]).toEqual({
      id: log.length,
      type: 'turn.completed',
      turn_id: TURN_ID,
      result: completed.result,
      snapshot: true,
    });
  });

  test('a failed turn read from the snapshot ends the stream with turn.failed, and finalResult() throws its typed failure', async () => {
    const error = {
      code: 'upstream_unavailable',
      message: 'The model API is down.',
      request_id: 'req_1',
      docs_url: 'd',
    };
    const api = fakeApi(log, [{ status: 404, code: 'turn_events_expired' }], {
      [`GET /v1/turns/${TURN_ID}`]: () =>
        json({ id: TURN_ID, status: 'failed', result: null, error, last_event_id: 12, cost_usd: 0.02 }),
    });
    const stream = client(api.fetch).turns.stream(TURN_ID);
    await expect(stream.finalResult()).rejects.toMatchObject({
      name: 'TurnFailedError',
      code: 'upstream_unavailable',
      requestId: 'req_1',
      costUsd: 0.02,
    });
    await expect(stream.finalResult()).rejects.toBeInstanceOf(TurnFailedError);
  });

  test("resumed at the terminal event (a Turn snapshot's last_event_id): the empty stream ends, and finalResult() has the outcome", async () => {
    const completed = log[log.length - 1].data as { result: { answer: string } };
    const api = fakeApi(log, [{}], {
      [`GET /v1/turns/${TURN_ID}`]: () =>
        json({
          id: TURN_ID,
          status: 'completed',
          result: completed.result,
          error: null,
          last_event_id: log.length,
          cost_usd: 0,
        }),
    });
    const stream = client(api.fetch).turns.stream(TURN_ID, { lastEventId: log.length });
    expect(await collect(stream)).toEqual([]);
    expect(api.streamRequests()).toHaveLength(1);
    expect((await stream.finalResult()).answer).toBe(completed.result.answer);
  });

  test('a clean close of a turn still running is a disconnect, even when the stored Turn is read', async () => {
    const api = fakeApi(log, [{ events: 3, then: 'close' }, {}], {
      [`GET /v1/turns/${TURN_ID}`]: () =>
        json({ id: TURN_ID, status: 'running', result: null, error: null, last_event_id: 5 }),
    });
    const events = await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(ids(events)).toEqual(oneToN(log.length));
  });

  test('once the terminal event is in, a clean close ends the stream without reconnecting', async () => {
    const api = fakeApi(log, [{}]);
    await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(api.streamRequests()).toHaveLength(1);
  });

  test('a connection that breaks right after the terminal event is looked at once more, then the stream ends quietly', async () => {
    const api = fakeApi(log, [{ then: 'error' }, { status: 503 }]);
    const events = await collect(client(api.fetch).turns.stream(TURN_ID));
    expect(events[events.length - 1].type).toBe('turn.completed');
    expect(api.streamRequests()).toHaveLength(2);
  });

  test("an operator's retry of a failed turn continues the stream: it ends at the last terminal event", async () => {
    const failed = { code: 'upstream_unavailable', message: 'down', request_id: 'req_1', docs_url: 'd' };
    const retriedLog: LogEvent[] = [
      { id: 1, type: 'turn.started', data: { turn_id: TURN_ID, at: 'a' } },
      { id: 2, type: 'turn.failed', data: { turn_id: TURN_ID, error: failed, cost_usd: 0.01 } },
      { id: 3, type: 'turn.retried', data: { turn_id: TURN_ID, attempt: 2, previous_error: failed, at: 'b' } },
      ...log.slice(1).map((e) => ({ ...e, id: e.id + 2 })),
    ];
    const api = fakeApi(retriedLog, [{}]);
    const stream = client(api.fetch).turns.stream(TURN_ID);
    const result = await stream.finalResult();
    expect(result.answer).toBe('Your average resting heart rate is 58 bpm.');
    expect(stream.lastEventId).toBe(retriedLog.length);
  });
});

describe('backoff per outage', () => {
  test('maxRetries failures in a row throw StreamDisconnectedError carrying the last id', async () => {
    const api = fakeApi(log, [
      { events: 3, then: 'error' },
      { events: 0, then: 'error' },
    ]);
    const seen: TurnStreamEvent[] = [];
    const stream = client(api.fetch, { maxRetries: 3 }).turns.stream(TURN_ID);
    const error = await collect({
      async *[Symbol.asyncIterator]() {
        for await (const e of stream) {
          seen.push(e);
          yield e;
        }
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamDisconnectedError);
    expect(error).toMatchObject({ lastEventId: 3, attempts: 4, code: 'stream_disconnected' });
    expect(ids(seen)).toEqual([1, 2, 3]);
    expect(api.streamRequests()).toHaveLength(4); // the first connection and three retries
  });

  test('a long turn cut every few events never gives up: the count starts over with each event', async () => {
    const long = turnLog(Array.from({ length: 60 }, (_, i) => `${i} `));
    const api = fakeApi(long, [{ events: 1, then: 'error' }]);
    const events = await collect(client(api.fetch, { maxRetries: 2 }).turns.stream(TURN_ID));
    expect(ids(events)).toEqual(oneToN(long.length));
    expect(api.streamRequests().length).toBeGreaterThanOrEqual(long.length);
  });

  test('5xx and 429 answers are retried and Retry-After sets the wait; 401 and 404 are thrown at once', async () => {
    const reconnects: ReconnectInfo[] = [];
    const api = fakeApi(log, [
      { status: 503, headers: { 'retry-after': '0.02' } },
      { status: 429, code: 'rate_limited' },
      {},
    ]);
    const events = await collect(
      client(api.fetch, { retryDelayMs: 1, maxRetryDelayMs: 1000 }).turns.stream(TURN_ID, {
        onReconnect: (_lastId, r) => reconnects.push(r),
      }),
    );
    expect(ids(events)).toEqual(oneToN(log.length));
    expect(reconnects[0].delayMs).toBe(20);
    expect(reconnects.map((r) => r.attempt)).toEqual([1, 2]);

    const unauthorized = fakeApi(log, [{ status: 401, code: 'invalid_api_key' }]);
    await expect(collect(client(unauthorized.fetch).turns.stream(TURN_ID))).rejects.toBeInstanceOf(AuthenticationError);
    expect(unauthorized.streamRequests()).toHaveLength(1);
    const missing = fakeApi(log, [{ status: 404, code: 'not_found' }]);
    await expect(collect(client(missing.fetch).turns.stream(TURN_ID))).rejects.toBeInstanceOf(NotFoundError);
  });

  test('the waits grow exponentially, with full jitter under a cap', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.999);
    try {
      const reconnects: ReconnectInfo[] = [];
      const api = fakeApi(log, [{ events: 0, then: 'error' }]);
      const stream = client(api.fetch, { retryDelayMs: 2, maxRetryDelayMs: 10, maxRetries: 5 }).turns.stream(TURN_ID, {
        onReconnect: (_lastId, r) => reconnects.push(r),
      });
      await expect(collect(stream)).rejects.toBeInstanceOf(StreamDisconnectedError);
      expect(reconnects.map((r) => r.delayMs)).toEqual([1, 3, 7, 9, 9]);
    } finally {
      jest.restoreAllMocks();
    }
  });
});

describe('the idle watchdog', () => {
  afterEach(() => jest.useRealTimers());

  test('a connection silent for idleTimeoutMs is dropped and reopened; a slow consumer does not trip it', async () => {
    jest.useFakeTimers();
    const api = fakeApi(log, [{ events: 3, then: 'hang' }, {}]);
    const reconnects: ReconnectInfo[] = [];
    const stream = client(api.fetch).turns.stream(TURN_ID, {
      idleTimeoutMs: 10_000,
      onReconnect: (_lastId, r) => reconnects.push(r),
    });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value.id).toBe(1);
    // The consumer dawdles far longer than the timeout between events: no reconnection for that.
    await jest.advanceTimersByTimeAsync(60_000);
    expect((await iterator.next()).value.id).toBe(2);
    expect((await iterator.next()).value.id).toBe(3);
    expect(reconnects).toHaveLength(0);
    const fourth = iterator.next();
    await jest.advanceTimersByTimeAsync(9_999);
    expect(api.streamRequests()).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect((await fourth).value.id).toBe(4);
    expect(reconnects).toHaveLength(1);
    expect(String(reconnects[0].cause)).toMatch(/No data for 10000 ms/);
    expect(api.streamRequests()[0].signal?.aborted).toBe(true);
    await iterator.return?.();
  });
});

describe('detach is not cancel', () => {
  test('break closes the connection and sends nothing else: the turn keeps running', async () => {
    const api = fakeApi(log, [{ events: 4, then: 'hang' }]);
    for await (const event of client(api.fetch).turns.stream(TURN_ID)) {
      if (event.id === 3) break;
    }
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0].signal?.aborted).toBe(true);
  });

  test('an aborted signal stops the iterator with APIUserAbortError while it waits, and cancels nothing', async () => {
    const api = fakeApi(log, [{ events: 2, then: 'hang' }]);
    const controller = new AbortController();
    const stream = client(api.fetch).turns.stream(TURN_ID, { signal: controller.signal });
    const seen: number[] = [];
    const done = (async () => {
      for await (const event of stream) {
        seen.push(event.id);
        if (event.id === 2) setTimeout(() => controller.abort(), 5);
      }
    })();
    await expect(done).rejects.toBeInstanceOf(APIUserAbortError);
    expect(seen).toEqual([1, 2]);
    expect(api.requests.every((r) => r.method === 'GET')).toBe(true);
    expect(api.requests[0].signal?.aborted).toBe(true);
  });

  test('1,000 streams on one AbortSignal leave no listener behind and print no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const amy = client(fakeApi(log, [{ events: 3, then: 'hang' }]).fetch);
      const streams = Array.from({ length: 1000 }, () => amy.turns.stream(TURN_ID, { signal: controller.signal }));
      // All open at once: each has received an event and waits on its connection.
      const iterators = streams.map((s) => s[Symbol.asyncIterator]());
      await Promise.all(iterators.map((it) => it.next()));
      expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(1);
      await Promise.all(iterators.map((it) => it.return?.()));
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      // And the same many streams read to their end one after another.
      const done = client(fakeApi(log, [{}]).fetch);
      for (let i = 0; i < 1000; i++) await collect(done.turns.stream(TURN_ID, { signal: controller.signal }));
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('typed events and helpers', () => {
  test('an event type the SDK does not know is yielded as unknown, never thrown', async () => {
    const withNew: LogEvent[] = [...log.slice(0, 2), { id: 3, type: 'agent.mood', data: { mood: 'curious' } }];
    const rest = log.slice(2).map((e) => ({ ...e, id: e.id + 1 }));
    const events = await collect(client(fakeApi([...withNew, ...rest], [{}]).fetch).turns.stream(TURN_ID));
    expect(events[2]).toEqual({ id: 3, type: 'unknown', event: 'agent.mood', data: { mood: 'curious' } });
    expect(events[events.length - 1].type).toBe('turn.completed');
  });

  test("text(agent) is the agent's deltas concatenated: a retried step's attempt goes on from what the failed one showed", async () => {
    const retried: LogEvent[] = [
      { id: 1, type: 'turn.started', data: { turn_id: TURN_ID, at: 'a' } },
      { id: 2, type: 'agent.started', data: { agent: 'data_science', at: 'a', question: 'q' } },
      { id: 3, type: 'agent.thought', data: { agent: 'data_science', delta: 'Ran it. ', attempt: 1, step: 'ds_run' } },
      { id: 4, type: 'agent.thought', data: { agent: 'synthesis', delta: 'Your aver', attempt: 1, step: 'synthesis' } },
      {
        id: 5,
        type: 'step.retry',
        data: { step: 'synthesis', attempt: 2, reason: 'previous attempt failed', at: 'b' },
      },
      {
        id: 6,
        type: 'agent.thought',
        data: { agent: 'synthesis', delta: 'age ', attempt: 2, step: 'synthesis' },
      },
      {
        id: 7,
        type: 'agent.thought',
        data: { agent: 'synthesis', delta: 'is 58 bpm.', attempt: 2, step: 'synthesis' },
      },
    ];
    const texts: string[] = [];
    const stream = client(fakeApi(retried, [{ then: 'hang' }]).fetch).turns.stream(TURN_ID);
    for await (const event of stream) {
      texts.push(stream.text('synthesis'));
      if (event.id === 7) break;
    }
    expect(texts).toEqual(['', '', '', 'Your aver', 'Your aver', 'Your average ', 'Your average is 58 bpm.']);
    expect(stream.text('data_science')).toBe('Ran it. ');
  });

  test('finalResult() reads the stream to its end and returns the result; text() then holds the whole answer', async () => {
    const stream = client(fakeApi(log, [{ events: 4, then: 'error' }, {}]).fetch).turns.stream(TURN_ID);
    const result = await stream.finalResult();
    expect(result.answer).toBe('Your average resting heart rate is 58 bpm.');
    expect(stream.text('synthesis')).toBe(result.answer);
  });

  test('a stream is read once: a second iteration is refused with a clear error', async () => {
    const stream = client(fakeApi(log, [{}]).fetch).turns.stream(TURN_ID);
    await collect(stream);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/already being read/);
  });
});

describe('pluggable transport: an EventSource', () => {
  /** A React Native–style EventSource (it takes headers) over the fake API's fetch, reconnection left to the SDK. */
  function eventSourceOver(
    api: ReturnType<typeof fakeApi>,
    opened: Array<{ url: string; headers: Record<string, string> }>,
  ) {
    return class FakeEventSource {
      private listeners = new Map<string, Array<(e: EventSourceEvent) => void>>();
      private controller = new AbortController();
      constructor(url: string, init?: { headers?: Record<string, string> }) {
        opened.push({ url, headers: init?.headers ?? {} });
        void this.run(url, init?.headers ?? {});
      }
      addEventListener(type: string, listener: (e: EventSourceEvent) => void) {
        this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
      }
      close() {
        this.controller.abort();
      }
      private emit(type: string, e: EventSourceEvent) {
        for (const l of this.listeners.get(type) ?? []) l(e);
      }
      private async run(url: string, headers: Record<string, string>) {
        try {
          const res = await api.fetch(url, { headers, signal: this.controller.signal });
          if (res.status !== 200) return this.emit('error', { status: res.status });
          this.emit('open', {});
          const text = await res.text();
          for (const block of text.split('\n\n').filter((b) => b.endsWith('}'))) {
            const [id, event, data] = block.split('\n').map((l) => l.slice(l.indexOf(': ') + 2));
            this.emit(event, { data, lastEventId: id });
          }
          this.emit('error', {});
        } catch {
          if (!this.controller.signal.aborted) this.emit('error', {});
        }
      }
    };
  }

  test('the same iterator runs over EventSourceCtor: exactly once across a broken connection, resuming by id', async () => {
    const api = fakeApi(log, [{ events: 3, partialBytes: 20, then: 'close' }, {}]);
    const opened: Array<{ url: string; headers: Record<string, string> }> = [];
    const amy = client(api.fetch, {
      EventSourceCtor: eventSourceOver(api, opened) as unknown as EventSourceConstructor,
    });
    const events = await collect(amy.turns.stream(TURN_ID));
    expect(ids(events)).toEqual(oneToN(log.length));
    expect(opened).toHaveLength(2);
    expect(opened[0].headers.Authorization).toBe('Bearer amy_test_key');
    expect(new URL(opened[1].url).searchParams.get('last_event_id')).toBe('3');
    expect(opened[1].headers['Last-Event-ID']).toBe('3');
  });

  test('a bare 404 from an EventSource is told apart by the stored Turn: an expired log ends with the snapshot', async () => {
    const completed = log[log.length - 1].data as { result: Record<string, unknown> };
    const api = fakeApi(log, [{ status: 404, code: 'turn_events_expired' }], {
      [`GET /v1/turns/${TURN_ID}`]: () =>
        json({
          id: TURN_ID,
          status: 'completed',
          result: completed.result,
          error: null,
          last_event_id: 11,
          cost_usd: 0,
        }),
    });
    const amy = client(api.fetch, { EventSourceCtor: eventSourceOver(api, []) as unknown as EventSourceConstructor });
    const events = await collect(amy.turns.stream(TURN_ID));
    expect(events).toEqual([
      { id: 11, type: 'turn.completed', turn_id: TURN_ID, result: completed.result, snapshot: true },
    ]);
  });
});

test('the wire format the fake serves is the server’s', () => {
  expect(formatEvent(log[0])).toBe(`id: 1\nevent: turn.started\ndata: ${JSON.stringify(log[0].data)}\n\n`);
});
