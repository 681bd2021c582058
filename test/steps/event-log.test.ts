import { Client, Pool } from 'pg';
import { createEventLog, EVENTS_CHANNEL, type EventLog } from '../../platform/event-log';
import { parseEventNotification } from '../../platform/event-notification';
import { turnAbandoned } from '../../platform/turn-ending';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';

describe('turn event log', () => {
  let t: TestDatabase;
  let pool: Pool;
  let log: EventLog;

  beforeAll(async () => {
    t = await createTestDatabase();
    pool = new Pool({ connectionString: t.url, max: 30 });
    log = createEventLog(pool);
  });
  afterAll(async () => {
    await pool.end();
    await t.drop();
  });

  /** A connection LISTENing on the events channel, collecting the payloads of `turnId`'s notifications. */
  async function listenToTurn(turnId: string) {
    const listener = new Client({ connectionString: t.url });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL && n.payload?.startsWith(`${turnId}:`)) notified.push(n.payload);
    });
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
    return { listener, notified };
  }

  test('ids start at 1 and stay gapless and unique under many concurrent writers', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const writers = Array.from({ length: 25 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 8; i++) {
          await log.append(turnId, [
            {
              type: 'agent.thought',
              data: { agent: 'data_science', delta: `w${w}-${i}a`, attempt: 1, step: 'ds_analysis' },
            },
            {
              type: 'agent.thought',
              data: { agent: 'data_science', delta: `w${w}-${i}b`, attempt: 1, step: 'ds_analysis' },
            },
          ]);
        }
      })(),
    );
    await Promise.all(writers);
    const events = await log.readAfter(turnId, 0, 10_000);
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    // A batch lands contiguously: each writer's "a" is immediately followed by its "b".
    for (let i = 0; i < events.length; i += 2) {
      expect(String(events[i + 1].data.delta)).toBe(String(events[i].data.delta).replace(/a$/, 'b'));
    }
  });

  test('an append is one round trip to Postgres: lock, dedupe, insert, last_event_id and notify in one statement', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    // The pool as the log sees it, counting every statement sent, on the pool or on a checked-out client.
    let statements = 0;
    const counting = new Proxy(pool, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return (...args: Parameters<Pool['query']>) => {
            statements++;
            return (target.query as (...a: unknown[]) => unknown)(...args);
          };
        }
        if (prop === 'connect') {
          return async () => {
            const client = await target.connect();
            const query = client.query.bind(client) as (...a: unknown[]) => unknown;
            (client as { query: unknown }).query = (...args: unknown[]) => {
              statements++;
              return query(...args);
            };
            return client;
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const counted = createEventLog(counting);
    const written = await counted.append(turnId, [
      { type: 'turn.started', data: { turn_id: turnId, at: 'x' }, dedupeKey: 'turn.started' },
      { type: 'agent.thought', data: { agent: 'synthesis', delta: 'a', attempt: 1, step: 'synthesis' } },
    ]);
    expect(written.map((e) => [e.id, e.type])).toEqual([
      [1, 'turn.started'],
      [2, 'agent.thought'],
    ]);
    expect(statements).toBe(1);
  });

  test('under concurrent writers each commit notifies <turn_id>:<last_id> and its events, in commit order, one per append', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const { listener, notified } = await listenToTurn(turnId);
    try {
      const thought = (delta: string) => ({
        type: 'agent.thought' as const,
        data: { agent: 'synthesis' as const, delta, attempt: 1, step: 'synthesis' },
      });
      await Promise.all(
        Array.from({ length: 20 }, (_, w) =>
          log.append(turnId, [thought(`${w}a`), thought(`${w}b`), thought(`${w}c`)]),
        ),
      );
      // A duplicate takes no id and notifies nothing.
      const started = { type: 'turn.started' as const, data: { turn_id: turnId, at: 'x' }, dedupeKey: 'turn.started' };
      await log.append(turnId, [started]);
      await log.append(turnId, [started]);
      const deadline = Date.now() + 10_000;
      while (notified.length < 21 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 100));
      const notices = notified.map((payload) => parseEventNotification(payload));
      expect(notices.map((n) => n?.lastId)).toEqual(Array.from({ length: 21 }, (_, i) => (i < 20 ? (i + 1) * 3 : 61)));
      // Each carries its own events, as the log holds them: the API delivers them without reading.
      const stored = await log.readAfter(turnId, 0, 100);
      expect(notices.flatMap((n) => n?.events() ?? [])).toEqual(stored);
    } finally {
      await listener.end();
    }
  });

  test('an append too large to carry in a notification (8000 bytes) notifies <turn_id>:<last_id> alone', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const { listener, notified } = await listenToTurn(turnId);
    try {
      const delta = 'é'.repeat(4000); // 8000 bytes in UTF-8, fewer characters
      await log.append(turnId, [
        { type: 'agent.thought', data: { agent: 'synthesis', delta, attempt: 1, step: 'synthesis' } },
      ]);
      const deadline = Date.now() + 10_000;
      while (notified.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(notified).toEqual([`${turnId}:1`]);
      expect(parseEventNotification(notified[0])?.events()).toBeNull();
    } finally {
      await listener.end();
    }
  });

  test('a deterministic event appended twice (a retried activity) is stored once and takes no id', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const started = { type: 'turn.started' as const, data: { turn_id: turnId, at: 'x' }, dedupeKey: 'turn.started' };
    expect(await log.append(turnId, [started])).toHaveLength(1);
    expect(await log.append(turnId, [started])).toHaveLength(0);
    await Promise.all(Array.from({ length: 10 }, () => log.append(turnId, [started])));
    await log.append(turnId, [
      { type: 'agent.thought', data: { agent: 'synthesis', delta: 'x', attempt: 1, step: 'synthesis' } },
    ]);
    const events = await log.readAfter(turnId, 0);
    expect(events.map((e) => [e.id, e.type])).toEqual([
      [1, 'turn.started'],
      [2, 'agent.thought'],
    ]);
  });

  test('once the turn has ended only its terminal event is written: a straggling agent cannot append after it', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    await pool.query(`UPDATE turns SET status = 'failed' WHERE id = $1`, [turnId]);
    const thought = {
      type: 'agent.thought' as const,
      data: { agent: 'domain_expert' as const, delta: 'late', attempt: 1, step: 'domain_expert' },
    };
    const failed = {
      type: 'turn.failed' as const,
      data: { turn_id: turnId, error: turnAbandoned('the turn ended'), cost_usd: 0 },
      dedupeKey: 'turn.terminal',
    };
    expect(await log.append(turnId, [failed, thought])).toHaveLength(1);
    expect(await log.append(turnId, [thought])).toHaveLength(0);
    expect((await log.readAfter(turnId, 0)).map((e) => e.type)).toEqual(['turn.failed']);
  });

  test('deterministic events are unique per attempt: a retried turn writes its own after the failed attempt’s', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const started = {
      type: 'agent.started' as const,
      data: { agent: 'synthesis' as const, at: 'x', question: 'q' },
      dedupeKey: 'agent.started:synthesis',
    };
    expect(await log.append(turnId, [started])).toHaveLength(1);
    await pool.query(`UPDATE turns SET attempt = 2 WHERE id = $1`, [turnId]);
    expect(await log.append(turnId, [started])).toHaveLength(1);
    expect(await log.append(turnId, [started])).toHaveLength(0);
    const keys = await pool.query('SELECT dedupe_key FROM turn_events WHERE turn_id = $1 ORDER BY id', [turnId]);
    expect(keys.rows.map((r) => r.dedupe_key)).toEqual(['agent.started:synthesis', 'attempt2:agent.started:synthesis']);
  });

  test('readAfter returns only later events, in order', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    for (let i = 0; i < 5; i++) {
      await log.append(turnId, [
        { type: 'agent.thought', data: { agent: 'synthesis', delta: String(i), attempt: 1, step: 'synthesis' } },
      ]);
    }
    expect((await log.readAfter(turnId, 3)).map((e) => e.id)).toEqual([4, 5]);
    expect(await log.readAfter(turnId, 5)).toEqual([]);
  });

  test('appending to a turn that does not exist fails and writes nothing', async () => {
    await expect(
      log.append('turn_01HX0000000000000000000000', [
        { type: 'turn.started', data: { turn_id: 'turn_01HX0000000000000000000000', at: 'x' } },
      ]),
    ).rejects.toThrow(/does not exist/);
  });
});
