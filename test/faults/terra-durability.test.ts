/**
 * Terra events survive Postgres going away (docs/terra.md#what-happens-to-an-event), with the worker and the API as
 * real child processes on a cluster of the suite's own:
 *
 * - an event stored and handed to its ingestion workflow, whose transaction Postgres's shutdown breaks, is ingested
 *   once Postgres is back (the activity is retried), and its rows land once;
 * - a delivery that arrives while Postgres is away is not acknowledged (503, so Terra retries it) and, sent again
 *   once Postgres is back, is stored and ingested;
 * - neither process dies of it.
 */
import type { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { freePort } from '../../dev/stack/ports';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { startRestartablePostgres, type RestartablePostgres } from '../support/restartable-postgres';
import { startTestService, type TestService } from '../support/service';
import { dailyEvent, deliverToTerraReceiver, TERRA_TEST_SECRET } from '../support/terra-delivery';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(180_000);

let pg: RestartablePostgres;
let svc: TestService;
let worker: ChildProcess | null = null;
let apiProcess: ApiProcess | null = null;

beforeAll(async () => {
  pg = await startRestartablePostgres();
  svc = await startTestService({ databaseUrl: pg.url, env: { TERRA_SIGNING_SECRET: TERRA_TEST_SECRET } });
  await svc.stopWorker(); // this suite's worker and API are real processes
  const port = await freePort();
  [worker, apiProcess] = await Promise.all([
    spawnWorkerProcess(svc.config),
    spawnApiProcess(svc.config, port, { env: { TERRA_SIGNING_SECRET: TERRA_TEST_SECRET } }),
  ]);
}, 120_000);
afterAll(async () => {
  if (worker) await killHard(worker);
  if (apiProcess) await killHard(apiProcess.child);
  await svc?.close();
  await pg?.destroy();
});

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('Postgres restarted under an ingestion and a delivery: nothing is lost, nothing doubled, nobody crashes', async () => {
  const user = await svc.createUser('terra-durable');
  const who = { terraUser: '40f7b0e1-89e2-43ac-a5b8-1e29c8d47cad', provider: 'GARMIN', reference: user.userId };
  const status = async (id: unknown) =>
    (await svc.database.pool.query<{ status: string }>('SELECT status FROM terra_events WHERE id = $1', [id])).rows[0]
      ?.status;

  // The user's ingestions take this lock first (platform/terra/ingest.ts): held here, the first event's
  // ingestion waits inside its transaction until Postgres's shutdown breaks it.
  const lock = new Client({ connectionString: pg.url });
  lock.on('error', () => undefined);
  await lock.connect();
  await lock.query(`SELECT pg_advisory_lock(hashtextextended('terra ingest ' || $1, 0))`, [user.userId]);
  const first = await deliverToTerraReceiver(apiProcess!.url, dailyEvent([{ date: '2026-11-01', steps: 1111 }], who));
  expect(first).toMatchObject({ status: 200, body: { duplicate: false } });
  await until(async () => {
    const { rows } = await lock.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
    );
    return rows[0].n > 0;
  }, 'the ingestion waits on the lock');

  await pg.stop();
  await lock.end().catch(() => undefined);
  const secondEvent = dailyEvent([{ date: '2026-11-02', steps: 2222 }], who);
  const refused = await deliverToTerraReceiver(apiProcess!.url, secondEvent);
  expect(refused).toMatchObject({ status: 503, body: { error: { code: 'service_unavailable' } } });
  await new Promise((r) => setTimeout(r, 2_000));
  await pg.start();

  await until(async () => (await status(first.body.id)) === 'applied', 'the first event is ingested');
  const again = await deliverToTerraReceiver(apiProcess!.url, secondEvent);
  expect(again).toMatchObject({ status: 200, body: { duplicate: false } });
  await until(async () => (await status(again.body.id)) === 'applied', 'the second event is ingested');

  const { rows } = await svc.database.pool.query<{ date: string; steps: number }>(
    `SELECT to_char(date, 'YYYY-MM-DD') AS date, steps FROM daily_summaries WHERE user_id = $1 ORDER BY date`,
    [user.userId],
  );
  expect(rows).toEqual([
    { date: '2026-11-01', steps: 1111 },
    { date: '2026-11-02', steps: 2222 },
  ]);
  const events = await svc.database.pool.query('SELECT 1 FROM terra_events WHERE user_id = $1', [user.userId]);
  expect(events.rowCount).toBe(2);
  expect(alive(worker!)).toBe(true);
  expect(apiProcess!.alive()).toBe(true);
});
