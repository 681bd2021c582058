/**
 * The estimate a confirmation of the Investigator's scan carries: the median cost and duration of the deployment's
 * recent completed scans, on a real Postgres; the measured figures until there are five.
 */
import { estimateInvestigatorScan } from '../../activities/bookkeeping/scan-estimate';
import { startStepHarness, type StepHarness } from '../support/step-harness';

let h: StepHarness;
beforeAll(async () => {
  h = await startStepHarness();
});
afterAll(async () => {
  await h?.close();
});

async function completedTurn(agents: string[], costUsd: number, durationMs: number): Promise<void> {
  const turnId = await h.newTurn();
  await h.deps.pool.query(`UPDATE turns SET status = 'completed', completed_at = now(), result = $2 WHERE id = $1`, [
    turnId,
    { answer: 'a', agents_used: agents, cost_usd: costUsd, duration_ms: durationMs },
  ]);
}

test('until five scans have completed, the measured figures; then the median of the recent scans, others ignored', async () => {
  const measured = await estimateInvestigatorScan(h.deps.pool);
  expect(measured).toEqual({ cost_usd: expect.any(Number), duration_seconds: expect.any(Number) });

  for (const [cost, ms] of [
    [0.1, 30_000],
    [0.2, 40_000],
    [0.3, 50_000],
    [0.4, 60_000],
  ]) {
    await completedTurn(['investigator'], cost, ms);
  }
  // A turn of another shape, however dear, is not a scan.
  await completedTurn(['data_science'], 9, 900_000);
  expect(await estimateInvestigatorScan(h.deps.pool)).toEqual(measured);

  await completedTurn(['investigator'], 0.5, 70_000);
  expect(await estimateInvestigatorScan(h.deps.pool)).toEqual({ cost_usd: 0.3, duration_seconds: 50 });
});
