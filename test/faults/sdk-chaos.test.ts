/**
 * `@amy/sdk` against the real service through a proxy that breaks connections: cut after a random
 * number of bytes (mid-header, mid-frame, mid-UTF-8 character), or right between a turn's last delta
 * and its terminal event. Every turn's events still arrive exactly once, in order, identical to the
 * stored log; and a creation whose response is lost after the server accepted it starts one turn.
 */
import { Amy, type TurnStreamEvent } from '@amy/sdk';
import { createEventLog } from '../../platform/event-log';
import { startDemoService, type DemoService } from '../support/service';
import { passThrough, startChaosProxy, type ChaosProxy } from '../support/chaos-proxy';

let demo: DemoService;
let proxy: ChaosProxy;

beforeAll(async () => {
  // Paced deltas keep turns live while their connections are cut.
  demo = await startDemoService({ scripted: { streamChunkDelayMs: 10 } });
  proxy = await startChaosProxy(demo.svc.url);
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await demo?.close();
});

/** A small seeded PRNG (mulberry32), so a failing run can be repeated with its seed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a direct read of the log gives, in the SDK's shape. */
async function storedEvents(turnId: string) {
  const stored = await createEventLog(demo.pool).readAfter(turnId, 0, 100_000);
  return stored.map((e) => ({ ...e.data, id: e.id, type: e.type }));
}

async function collect(iterable: AsyncIterable<TurnStreamEvent>) {
  const events: TurnStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const direct = () => new Amy({ apiKey: demo.user.apiKey, baseUrl: demo.svc.url });
// Cut this often, the count of failures in a row needs more room than the default; backoff stays short.
const throughProxy = () =>
  new Amy({ apiKey: demo.user.apiKey, baseUrl: proxy.url, maxRetries: 25, retryDelayMs: 20, maxRetryDelayMs: 250 });

const QUESTIONS = [
  'What is my average resting heart rate over the last 90 days?',
  'thanks, that was really helpful — see you tomorrow!',
  'What is heart rate variability?',
  'What is my average steps over the last 30 days?',
  'thank you so much!',
];

test('at least 50 forced disconnects over several turns: every turn’s events exactly once, identical to a direct read', async () => {
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
  const random = prng(seed);
  // Four streams in five are cut somewhere in their first 2 KB, most of them early: inside the
  // headers, inside an event, inside a multi-byte character, wherever the byte count falls. One in
  // five passes whole, so even a turn.completed longer than most cuts gets through in the end.
  proxy.setPolicy({
    cutAfterBytes: ({ requestLine }) =>
      requestLine.startsWith('GET') && random() < 0.8 ? 1 + Math.floor(random() ** 2 * 2048) : null,
  });
  const startCuts = proxy.cuts();
  let reconnects = 0;
  const results: Array<{ turnId: string; events: TurnStreamEvent[] }> = [];
  // Turns go two at a time (the per-user cap is three), until at least 50 cuts over at least 4 turns.
  for (let round = 0; results.length < 4 || proxy.cuts() - startCuts < 50; round++) {
    if (round >= 25)
      throw new Error(`only ${proxy.cuts() - startCuts} cuts after ${results.length} turns (seed ${seed})`);
    const batch = [QUESTIONS[(2 * round) % QUESTIONS.length], QUESTIONS[(2 * round + 1) % QUESTIONS.length]];
    results.push(
      ...(await Promise.all(
        batch.map(async (content) => {
          const turn = await direct().turns.create({ messages: [{ role: 'user', content }] });
          const events = await collect(throughProxy().turns.stream(turn.id, { onReconnect: () => reconnects++ }));
          return { turnId: turn.id, events };
        }),
      )),
    );
  }
  const cuts = proxy.cuts() - startCuts;
  expect(cuts).toBeGreaterThanOrEqual(50);
  expect(reconnects).toBeGreaterThanOrEqual(cuts / 2);
  for (const { turnId, events } of results) {
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events[events.length - 1].type).toBe('turn.completed');
    expect(events).toEqual(await storedEvents(turnId));
  }
}, 600_000);

test('a cut between the last delta and the terminal event: the reconnection brings turn.completed, then the stream ends', async () => {
  const turn = await direct().turns.create({ messages: [{ role: 'user', content: 'thanks, that really helped!' }] });
  const cutsBefore = proxy.cuts();
  // Only the first stream is cut there; its reconnection passes.
  proxy.setPolicy({
    cutAfterBytes: () => null,
    cutBefore: () => (proxy.cuts() === cutsBefore ? 'event: turn.completed' : null),
  });
  const resumedAfter: number[] = [];
  const stream = throughProxy().turns.stream(turn.id, { onReconnect: (lastId) => resumedAfter.push(lastId) });
  const result = await stream.finalResult();
  expect(proxy.cuts()).toBe(cutsBefore + 1);
  expect(stream.text('synthesis')).toBe(result.answer);
  const stored = await storedEvents(turn.id);
  expect(resumedAfter).toEqual([stored[stored.length - 2].id]);
  expect(stream.lastEventId).toBe(stored[stored.length - 1].id);
  proxy.setPolicy(passThrough);
}, 120_000);

test('a creation whose response is lost after the server accepted it starts exactly one turn', async () => {
  // A proxy of its own, so that the creation is the first connection through it and the one cut.
  const lossy = await startChaosProxy(demo.svc.url, { cutAfterBytes: ({ index }) => (index === 1 ? 0 : null) });
  try {
    const user = await demo.svc.createUser();
    const amy = new Amy({ apiKey: user.apiKey, baseUrl: lossy.url, retryDelayMs: 10 });
    const turn = await amy.turns.create({ messages: [{ role: 'user', content: 'thanks!' }] });
    expect(lossy.cuts()).toBe(1);
    expect(lossy.exchanges()).toBe(2);
    const { rows } = await demo.pool.query<{ id: string }>('SELECT id FROM turns WHERE user_id = $1', [user.userId]);
    expect(rows.map((r) => r.id)).toEqual([turn.id]);
    expect((await amy.turns.stream(turn.id).finalResult()).answer.length).toBeGreaterThan(0);
  } finally {
    await lossy.close();
  }
}, 120_000);
