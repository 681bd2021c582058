/**
 * The load script's accounting of an in-flight phase (dev/bench/load-numbers.ts): the memory a turn in
 * flight costs, from resident-memory samples, and each stream's events against the turn's log.
 */
import { eventAccounting, inFlightMemory } from '../../dev/bench/load-numbers';

describe('inFlightMemory', () => {
  test('growth from the start to the last sample with the most turns in flight, per turn in flight then', () => {
    const m = inFlightMemory([
      { inFlight: 0, workersKb: 200_000, apisKb: 100_000 },
      { inFlight: 500, workersKb: 300_000, apisKb: 120_000 },
      { inFlight: 1000, workersKb: 350_000, apisKb: 140_000 },
      { inFlight: 1000, workersKb: 400_000, apisKb: 150_000 },
      { inFlight: 400, workersKb: 450_000, apisKb: 160_000 },
    ]);
    expect(m).toEqual({
      peakInFlight: 1000,
      workersStartMb: 204.8,
      workersAtPeakMb: 409.6,
      workersMaxMb: 460.8,
      apisStartMb: 102.4,
      apisAtPeakMb: 153.6,
      workerKbPerTurn: 200,
      apiKbPerTurn: 50,
    });
  });

  test('with nothing in flight there is no per-turn figure', () => {
    expect(inFlightMemory([{ inFlight: 0, workersKb: 1, apisKb: 1 }])).toMatchObject({
      peakInFlight: 0,
      workerKbPerTurn: null,
      apiKbPerTurn: null,
    });
    expect(() => inFlightMemory([])).toThrow(/no memory samples/);
  });
});

describe('eventAccounting', () => {
  const log = new Set([1, 2, 3, 4]);
  test('every event once', () => expect(eventAccounting([1, 2, 3, 4], log)).toEqual({ missing: 0, duplicated: 0 }));
  test('a gap and a repeat are both counted', () =>
    expect(eventAccounting([1, 2, 2, 4], log)).toEqual({ missing: 1, duplicated: 1 }));
});
