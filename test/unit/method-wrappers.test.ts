/**
 * A layer laid over a service with wrapMethods (the spans, the sandbox's metrics) sees each call of a
 * method it names, with the caller's arguments, and decides what the caller gets; every other member
 * reads through to the service as it is when read: a getter stays live, a method keeps its `this`.
 */
import { wrapMethods } from '../../platform/method-wrappers';

interface Counter {
  add(by: number, label?: string): Promise<number>;
  reset(): void;
  readonly total: number;
}

class CounterService implements Counter {
  #total = 0;
  calls: Array<[number, string | undefined]> = [];

  async add(by: number, label?: string): Promise<number> {
    this.calls.push([by, label]);
    this.#total += by;
    return this.#total;
  }

  reset(): void {
    this.#total = 0;
  }

  get total(): number {
    return this.#total;
  }
}

test('a wrapped method is called with the caller’s arguments, and the wrapper decides what the caller gets', async () => {
  const service = new CounterService();
  const seen: Array<[number, string | undefined]> = [];
  const counter: Counter = wrapMethods<Counter>(service, {
    add: async (add, by, label) => {
      seen.push([by, label]);
      return (await add()) * 10;
    },
  });
  await expect(counter.add(2, 'first')).resolves.toBe(20);
  await expect(counter.add(3)).resolves.toBe(50);
  expect(seen).toEqual([
    [2, 'first'],
    [3, undefined],
  ]);
  expect(service.calls).toEqual(seen);
});

test('a rejection of the call reaches the wrapper, and through it the caller', async () => {
  const failing: Counter = {
    add: async () => {
      throw new Error('refused');
    },
    reset: () => undefined,
    total: 0,
  };
  const outcomes: string[] = [];
  const counter = wrapMethods(failing, {
    add: (add) =>
      add().catch((err: unknown) => {
        outcomes.push('failed');
        throw err;
      }),
  });
  await expect(counter.add(1)).rejects.toThrow('refused');
  expect(outcomes).toEqual(['failed']);
});

test('members it does not name read through live, methods on the service itself', async () => {
  const service = new CounterService();
  const counter = wrapMethods<Counter>(service, { add: (add) => add() });
  await counter.add(4);
  expect(counter.total).toBe(4);
  // A method using a private field works only when called on the service, not on the wrapper.
  counter.reset();
  expect(counter.total).toBe(0);
  expect(service.total).toBe(0);
});

test('layers stack: the outer one sees the inner one’s result', async () => {
  const service = new CounterService();
  const order: string[] = [];
  const inner = wrapMethods<Counter>(service, {
    add: async (add) => {
      order.push('inner');
      return (await add()) + 1;
    },
  });
  const outer = wrapMethods(inner, {
    add: async (add) => {
      order.push('outer');
      return (await add()) * 2;
    },
  });
  await expect(outer.add(1)).resolves.toBe(4);
  expect(order).toEqual(['outer', 'inner']);
  expect(outer.total).toBe(1);
});
