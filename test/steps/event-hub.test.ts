/**
 * The API's live fan-out (api/streaming/event-hub.ts) on a real Postgres: events a notification carries reach the
 * subscribers they continue without a read of the log; whatever a notification cannot carry, or a
 * subscriber behind it, is read. Every subscriber gets every event once, in order.
 */
import { Pool } from 'pg';
import type { TurnEvent } from '../../contracts/event-data';
import { startEventHub, type EventHub } from '../../api/streaming/event-hub';
import { createEventLog, type EventLog, type NewTurnEvent } from '../../platform/event-log';
import { createLogger } from '../../platform/logger';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { insertUserAndTurn } from '../support/fixtures';

const thought = (delta: string): NewTurnEvent => ({
  type: 'agent.thought',
  data: { agent: 'synthesis', delta, attempt: 1, step: 'synthesis' },
});

async function until(condition: () => boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('event hub', () => {
  let t: TestDatabase;
  let pool: Pool;
  let log: EventLog;
  let hub: EventHub;
  /** The reads the hub made of the log, per turn: counted as each starts, and again as each has returned. */
  const reads = new Map<string, number>();
  const readsDone = new Map<string, number>();

  beforeAll(async () => {
    t = await createTestDatabase();
    pool = new Pool({ connectionString: t.url, max: 20 });
    log = createEventLog(pool);
    const counted: EventLog = {
      append: (turnId, events) => log.append(turnId, events),
      readKeyed: (turnId, keyPrefix) => log.readKeyed(turnId, keyPrefix),
      readAfter: async (turnId, afterId, limit) => {
        reads.set(turnId, (reads.get(turnId) ?? 0) + 1);
        const batch = await log.readAfter(turnId, afterId, limit);
        readsDone.set(turnId, (readsDone.get(turnId) ?? 0) + 1);
        return batch;
      },
    };
    hub = await startEventHub({ databaseUrl: t.url, events: counted, logger: createLogger('test', 'error') });
  });
  afterAll(async () => {
    await hub.close();
    await pool.end();
    await t.drop();
  });

  // A test waits for a subscriber's first read to have returned, not just begun, before it appends: a notification
  // that arrives while that read is under way is (rightly) answered with another read, which a loaded machine made
  // happen.
  function subscribe(turnId: string, afterId: number) {
    const received: TurnEvent[] = [];
    const unsubscribe = hub.subscribe(turnId, afterId, (events) => received.push(...events));
    return { received, unsubscribe };
  }

  test('a live subscriber gets appended events from their notifications, with no read of the log', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const live = subscribe(turnId, 0);
    await until(() => (readsDone.get(turnId) ?? 0) === 1, 'the first read to return');
    for (let i = 1; i <= 5; i++) await log.append(turnId, [thought(`d${i}`)]);
    await until(() => live.received.length === 5, 'five events');
    expect(live.received).toEqual(await log.readAfter(turnId, 0));
    expect(reads.get(turnId)).toBe(1);
    live.unsubscribe();
  });

  test('an append too large for a notification is read from the log', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    const live = subscribe(turnId, 0);
    await until(() => (readsDone.get(turnId) ?? 0) === 1, 'the first read to return');
    await log.append(turnId, [thought('x'.repeat(9000))]);
    await until(() => live.received.length === 1, 'the large event');
    expect(reads.get(turnId)).toBe(2);
    expect(live.received[0].data.delta).toHaveLength(9000);
    live.unsubscribe();
  });

  test('under concurrent appends, subscribers joining at different points each get every event once, in order', async () => {
    const { turnId } = await insertUserAndTurn(t.url);
    await log.append(turnId, [thought('a'), thought('b'), thought('c')]);
    const subscribers = [subscribe(turnId, 0), subscribe(turnId, 3)];
    const writers = Array.from({ length: 10 }, (_, w) =>
      (async () => {
        for (let i = 0; i < 10; i++) {
          await log.append(
            turnId,
            i % 4 === 3 ? [thought(`${w}-${i}`), thought('y'.repeat(5000))] : [thought(`${w}-${i}`)],
          );
          // Late joiners, from the start and from an event already delivered to others.
          if (w === 0 && i === 4) subscribers.push(subscribe(turnId, 0), subscribe(turnId, 7));
        }
      })(),
    );
    await Promise.all(writers);
    const all = await log.readAfter(turnId, 0, 10_000);
    expect(all).toHaveLength(3 + 10 * 10 + 10 * 2);
    const from = [0, 3, 0, 7];
    await until(() => subscribers.every((s, i) => s.received.length === all.length - from[i]), 'every event');
    subscribers.forEach((s, i) => expect(s.received).toEqual(all.slice(from[i])));
    // Most appends were delivered from their notifications (a read per append would be 123 or more).
    expect(reads.get(turnId)).toBeLessThan(60);
    subscribers.forEach((s) => s.unsubscribe());
  });
});
