/**
 * Bench (g)'s lowest reachable ratio (dev/bench/turn-cpu.ts): the floor plus what a turn spends in the roles
 * the floor does not run on (Postgres, the API), as if the turn's worker and Temporal cost what the floor's do.
 */
import { lowestReachableRatio } from '../../dev/bench/turn-cpu';

test('the floor plus the turn’s Postgres and API, and nothing of its worker or Temporal', () => {
  const turn = {
    byRole: [
      { role: 'workers', msPerRun: 70 },
      { role: 'Temporal', msPerRun: 55 },
      { role: 'Postgres', msPerRun: 20 },
      { role: 'API', msPerRun: 8 },
    ],
  };
  const lowest = lowestReachableRatio(turn, { msPerRun: 80 });
  expect(lowest.ratio).toBeCloseTo((80 + 20 + 8) / 80);
  expect(lowest.roles).toEqual([
    { role: 'Postgres', msPerRun: 20 },
    { role: 'API', msPerRun: 8 },
  ]);
});

test('a role the turn did not use counts as nothing', () => {
  const lowest = lowestReachableRatio({ byRole: [{ role: 'Postgres', msPerRun: 10 }] }, { msPerRun: 100 });
  expect(lowest.ratio).toBeCloseTo(1.1);
  expect(lowest.roles).toEqual([
    { role: 'Postgres', msPerRun: 10 },
    { role: 'API', msPerRun: 0 },
  ]);
});
