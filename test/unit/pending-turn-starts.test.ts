/**
 * The starts an API process still has going after answering their POST: its shutdown waits for them, up to a
 * bound, and a cancellation finds a turn's own.
 */
import { createPendingTurnStarts } from '../../api/temporal/pending-turn-starts';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

test('settled() waits for every start going, and a start is forgotten once it settles', async () => {
  const starts = createPendingTurnStarts();
  const first = deferred();
  const second = deferred();
  starts.add('turn_a', first.promise);
  starts.add('turn_b', second.promise);
  let left: number | undefined;
  const all = starts.settled(60_000).then((n) => (left = n));
  first.resolve();
  await first.promise;
  await Promise.resolve();
  expect(left).toBeUndefined();
  expect(starts.of('turn_a')).toBeUndefined();
  expect(starts.of('turn_b')).toBeDefined();
  second.resolve();
  await all;
  expect(left).toBe(0);
  expect(starts.of('turn_b')).toBeUndefined();
});

test('settled() gives up after its bound, with how many starts are still going', async () => {
  const starts = createPendingTurnStarts();
  const hanging = deferred();
  starts.add('turn_a', hanging.promise);
  starts.add('turn_b', Promise.resolve());
  await expect(starts.settled(20)).resolves.toBe(1);
  expect(starts.of('turn_a')).toBeDefined();
  hanging.resolve();
});

test('with nothing going, settled() resolves at once', async () => {
  await expect(createPendingTurnStarts().settled(60_000)).resolves.toBe(0);
});
