/**
 * The starts an API process still has going after answering their POST: its shutdown waits for every one
 * of them, and a cancellation finds a turn's own.
 */
import { createPendingTurnStarts } from '../../api/services/pending-turn-starts';

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
  let settled = false;
  const all = starts.settled().then(() => (settled = true));
  first.resolve();
  await first.promise;
  await Promise.resolve();
  expect(settled).toBe(false);
  expect(starts.of('turn_a')).toBeUndefined();
  expect(starts.of('turn_b')).toBeDefined();
  second.resolve();
  await all;
  expect(settled).toBe(true);
  expect(starts.of('turn_b')).toBeUndefined();
});

test('with nothing going, settled() resolves at once', async () => {
  await expect(createPendingTurnStarts().settled()).resolves.toBeUndefined();
});
