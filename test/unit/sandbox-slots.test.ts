/**
 * The sandbox's slots (platform/sandbox/slots.ts): a run whose caller gives up (a cancelled or
 * timed-out activity) leaves the queue without running, and the runs behind it move up.
 */
import { Slots } from '../../platform/sandbox/slots';

/** A held slot: `use` resolves once the slot is handed over, and the slot is freed by `release`. */
function hold(slots: Slots, signal?: AbortSignal) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let taken: (slot: number) => void;
  const slot = new Promise<number>((resolve) => (taken = resolve));
  const done = slots.with(async (n) => {
    taken(n);
    await released;
    return n;
  }, signal);
  return { slot, release, done };
}

describe('Slots: an aborted waiter leaves the queue without running', () => {
  test('a queued run whose signal aborts rejects with the reason, never runs, and the next in line gets the slot', async () => {
    const slots = new Slots(1);
    const holder = hold(slots);
    await holder.slot;
    const cancelled = new AbortController();
    const ran: string[] = [];
    const queued = slots.with(async () => ran.push('cancelled'), cancelled.signal);
    const behind = slots.with(async (slot) => ran.push(`behind in slot ${slot}`));
    expect(slots.load).toMatchObject({ running: 1, waiting: 2 });

    const reason = new Error('the turn was cancelled');
    cancelled.abort(reason);
    await expect(queued).rejects.toBe(reason);
    expect(slots.load).toMatchObject({ running: 1, waiting: 1 });

    holder.release();
    await behind;
    expect(ran).toEqual(['behind in slot 0']);
    expect(slots.load).toMatchObject({ running: 0, waiting: 0 });
  });

  test('a signal already aborted takes no slot, even a free one', async () => {
    const slots = new Slots(2);
    const gone = AbortSignal.abort(new Error('timed out'));
    const use = jest.fn(async () => 1);
    await expect(slots.with(use, gone)).rejects.toThrow('timed out');
    expect(use).not.toHaveBeenCalled();
    expect(slots.load).toEqual({ limit: 2, running: 0, waiting: 0, peak: 0 });
  });

  test('an abort after the slot was taken is the run’s to handle: the slot is freed when it ends', async () => {
    const slots = new Slots(1);
    const controller = new AbortController();
    const holder = hold(slots, controller.signal);
    await holder.slot;
    controller.abort();
    expect(slots.load).toMatchObject({ running: 1 });
    holder.release();
    await holder.done;
    expect(slots.load).toMatchObject({ running: 0, waiting: 0 });
    // The freed slot is taken at once by the next run.
    await expect(slots.with(async (slot) => slot)).resolves.toBe(0);
  });

  test('several waiters aborted in any order: the rest keep their order', async () => {
    const slots = new Slots(1);
    const holder = hold(slots);
    await holder.slot;
    const order: number[] = [];
    const controllers = [0, 1, 2, 3, 4].map(() => new AbortController());
    const runs = controllers.map((c, i) =>
      slots.with(async () => order.push(i), c.signal).catch(() => 'aborted' as const),
    );
    controllers[3]!.abort();
    controllers[0]!.abort();
    holder.release();
    expect(await Promise.all(runs)).toEqual(['aborted', 1, 2, 'aborted', 3]);
    expect(order).toEqual([1, 2, 4]);
  });
});
