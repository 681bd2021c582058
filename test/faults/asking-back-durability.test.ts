/**
 * A turn waiting for its user's answer outlives what a deploy does to the service (docs/api.md#asking-back): it asks,
 * the worker is SIGKILLed and started again, the API process serving the client is SIGKILLed and another takes its
 * address, and only then does the answer arrive. The turn goes on from where it stopped, with the answer it asked
 * for, and a client streaming it with its EventSource gets every event exactly once and in order, the question
 * included, across the reconnection.
 */
import { Pool } from 'pg';
import { freePort } from '../../dev/stack/ports';
import { createEventLog } from '../../platform/event-log';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api } from '../support/http';
import { startTestService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse-client';
import { killHard } from '../support/worker-process';

let svc: TestService;
let pool: Pool;
let port: number;
let apiProcess: ApiProcess | null = null;

beforeAll(async () => {
  svc = await startTestService();
  pool = new Pool({ connectionString: svc.database.url, max: 2 });
  port = await freePort();
  apiProcess = await spawnApiProcess(svc.config, port);
}, 120_000);
afterAll(async () => {
  if (apiProcess) await killHard(apiProcess.child);
  await pool?.end();
  await svc?.close();
});

test('asked, then the worker and the API are killed and restarted: the answer arrives and the turn completes as asked', async () => {
  const user = await svc.createUser();
  const created = await api(apiProcess!.url, 'POST', '/v1/turns', {
    key: user.apiKey,
    body: {
      messages: [{ role: 'user', content: 'Is there anything in my numbers worth knowing?' }],
      interaction: { accepts: ['confirmation'], timeout_seconds: 600 },
    },
  });
  expect(created.status).toBe(201);
  const turnId = created.body.id as string;
  const stream = openEventStream(`${apiProcess!.url}/v1/turns/${turnId}/events`, {
    apiKey: user.apiKey,
    reconnect: true,
  });
  const asked = await stream.waitFor((e) => e.type === 'turn.input_required');
  const requestId = asked.data.request_id as string;

  // While it waits: a crashed worker, started again, then the API process killed and replaced.
  await svc.killWorker();
  await svc.startWorker();
  await killHard(apiProcess!.child);
  apiProcess = await spawnApiProcess(svc.config, port);

  // The new API reads the turn as waiting, with its question, and takes the answer.
  const waiting = await api(apiProcess.url, 'GET', `/v1/turns/${turnId}`, { key: user.apiKey });
  expect(waiting.body).toMatchObject({ status: 'waiting_for_input', pending_input: { request_id: requestId } });
  const answered = await api(apiProcess.url, 'POST', `/v1/turns/${turnId}/input`, {
    key: user.apiKey,
    body: { request_id: requestId, option_id: 'scan' },
  });
  expect(answered.status).toBe(200);

  await stream.closedByServer;
  const events = stream.events;
  expect(stream.connections.length).toBeGreaterThanOrEqual(2);
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const stored = await createEventLog(pool).readAfter(turnId, 0, 10_000);
  expect(events.map(({ id, type, data }) => ({ id, type, data }))).toEqual(stored);
  const types = events.map((e) => e.type);
  expect(types.filter((t) => t === 'turn.input_required')).toHaveLength(1);
  expect(events.find((e) => e.type === 'turn.input_received')?.data).toMatchObject({
    request_id: requestId,
    option_id: 'scan',
    source: 'user',
  });
  // The answer it asked for: the Investigator's scan ran, after the answer, and the turn completed.
  const scan = events.findIndex((e) => e.type === 'agent.started' && e.data.agent === 'investigator');
  expect(scan).toBeGreaterThan(types.indexOf('turn.input_received'));
  expect(types.at(-1)).toBe('turn.completed');
});
