/**
 * One slow user must not fail others: a gates request that outlives its timeout
 * fails alone. The pathological input is a legitimate one, only enormous: a "user" with 100,000 days
 * of data in each of two findings, which the bootstrap takes tens of seconds over, against a 1 s
 * timeout. Real Python gates (gates-py, .venv), no hooks.
 */
import type { FindingSeries } from '../../contracts/findings';
import { createGatesRunner, defaultPythonPath, type GatesRunner } from '../../platform/gates';

/** Deterministic noise (a linear congruential generator): the values only need to vary. */
function series(id: string, n: number, seed: number): FindingSeries {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const x = Array.from({ length: n }, next);
  return {
    finding: {
      id,
      claim: 'steps go with sleep',
      kind: 'association',
      feature: 'steps',
      target: 'sleep_minutes',
      numbers: {},
      n: 0,
      window: 'all days',
    },
    feature_values: x,
    target_values: x.map((v) => 0.5 * v + 0.5 * next()),
  };
}

// About 12 s of gates work per finding on the CI machine; the 1 s timeout is met long before.
const PATHOLOGICAL = [series('huge-1', 100_000, 11), series('huge-2', 100_000, 12)];
const NORMAL = [series('normal', 180, 3)];

describe('a gates request that times out fails only itself', () => {
  let runner: GatesRunner | undefined;
  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  test('next to a normal request: the normal one is answered, only the pathological one fails', async () => {
    runner = createGatesRunner({ python: defaultPythonPath(), processes: 2 });
    // The pathological request is sent first: a single process would have the normal one queued behind it.
    const slow = runner.run(PATHOLOGICAL, { timeoutMs: 1_000 }).catch((err: unknown) => err);
    const normal = runner.run(NORMAL);

    const [outcome] = await normal;
    expect(outcome).toMatchObject({ finding_id: 'normal' });
    expect(await slow).toMatchObject({ name: 'GatesRunnerError', reason: 'timeout' });
  });

  test('with one process, requests queued behind the pathological one go on in its replacement', async () => {
    runner = createGatesRunner({ python: defaultPythonPath(), processes: 1 });
    const slow = runner.run(PATHOLOGICAL, { timeoutMs: 1_000 }).catch((err: unknown) => err);
    const queued = [runner.run(NORMAL), runner.run([series('normal-2', 120, 5)])];

    const answered = await Promise.all(queued);
    expect(answered.map(([outcome]) => outcome!.finding_id)).toEqual(['normal', 'normal-2']);
    expect(await slow).toMatchObject({ name: 'GatesRunnerError', reason: 'timeout' });
    expect(runner.pids).toHaveLength(1);
  });

  test('the pool never runs more processes than its size', async () => {
    runner = createGatesRunner({ python: defaultPythonPath(), processes: 2 });
    const seen = new Set<number>();
    const runs = Array.from({ length: 6 }, (_, i) =>
      runner!.run([series(`n-${i}`, 60, 20 + i)]).then(() => runner!.pids.forEach((pid) => seen.add(pid))),
    );
    await Promise.all(runs);
    expect(seen.size).toBeLessThanOrEqual(2);
  });
});

describe('a gates request whose caller gives up (cancelled, timed out) leaves the pool', () => {
  let runner: GatesRunner | undefined;
  afterEach(async () => {
    await runner?.close();
    runner = undefined;
  });

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test('queued: it rejects with the reason at once, unsent, and the request behind it is answered in its turn', async () => {
    runner = createGatesRunner({ python: defaultPythonPath(), processes: 1 });
    const holding = new AbortController();
    const slow = runner.run(PATHOLOGICAL, { timeoutMs: 120_000, signal: holding.signal }).catch((err: unknown) => err);
    const cancelling = new AbortController();
    const cancelled = runner.run(NORMAL, { signal: cancelling.signal });
    const behind = runner.run([series('behind', 120, 5)]);

    const reason = new Error('the turn was cancelled');
    cancelling.abort(reason);
    await expect(cancelled).rejects.toBe(reason);
    // The slow request is still in its process's hands; then it is given up too, and the queue goes on.
    expect(runner.pids).toHaveLength(1);
    holding.abort(new Error('done holding'));
    expect(await slow).toMatchObject({ message: 'done holding' });
    const [outcome] = await behind;
    expect(outcome).toMatchObject({ finding_id: 'behind' });
  });

  test('in a process’s hands: the process is killed (Python cannot be interrupted), the request rejects with the reason, a new process takes the next', async () => {
    runner = createGatesRunner({ python: defaultPythonPath(), processes: 1 });
    const controller = new AbortController();
    const slow = runner.run(PATHOLOGICAL, { timeoutMs: 120_000, signal: controller.signal });
    const [busy] = runner.pids;
    expect(busy).toBeDefined();

    const reason = new Error('the attempt timed out');
    controller.abort(reason);
    await expect(slow).rejects.toBe(reason);
    const deadline = Date.now() + 10_000;
    while (alive(busy!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(busy!)).toBe(false);

    const [outcome] = await runner.run(NORMAL);
    expect(outcome).toMatchObject({ finding_id: 'normal' });
    expect(runner.pids).not.toContain(busy);
  });

  test('a signal aborted before the call: nothing is sent, no process is started', async () => {
    runner = createGatesRunner({ python: defaultPythonPath(), processes: 1 });
    const reason = new Error('already cancelled');
    await expect(runner.run(NORMAL, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(
      runner.buildSeries({ daily: [] }, [{ finding: NORMAL[0]!.finding, windowDays: null }], {
        signal: AbortSignal.abort(reason),
      }),
    ).rejects.toBe(reason);
    expect(runner.pids).toEqual([]);
  });
});
