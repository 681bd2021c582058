/**
 * The operators' listeners stay on loopback whatever address the public API is given (docs/operations.md#metrics,
 * #the-codec-server): the compiled API and worker run with `HOST=0.0.0.0`, as the API's image sets it, and their
 * metrics listeners, and the API's codec server, still answer on 127.0.0.1 only. On Linux every 127.x.y.z address is this machine, so a listener
 * on every interface accepts a connection to 127.0.0.2 and one on 127.0.0.1 refuses it: the public port,
 * which does follow HOST, shows the probe tells the two apart. Exposing a listener is an explicit choice
 * (AMY_METRICS_HOST), which the last test makes.
 */
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from '../../dev/stack/ports';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { startTestService, type TestService } from '../support/service';
import { killHard, spawnWorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

/** Another loopback address than the default one: only a listener on every interface answers there. */
const OTHER_LOOPBACK = '127.0.0.2';

function acceptsConnection(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

let svc: TestService;
const apis: ApiProcess[] = [];
const workers: ChildProcess[] = [];

beforeAll(async () => {
  svc = await startTestService();
  await svc.stopWorker(); // the workers here are processes of their own, with their own settings
});
afterAll(async () => {
  await Promise.all(apis.map((api) => api.stop()));
  await Promise.all(workers.map((worker) => killHard(worker)));
  await svc?.close();
});

async function apiOnEveryInterface(env: Record<string, string>) {
  const port = await freePort();
  const api = await spawnApiProcess(svc.config, port, { env: { HOST: '0.0.0.0', ...env } });
  apis.push(api);
  return port;
}

test('with HOST=0.0.0.0 the API answers on every interface, its metrics on loopback only', async () => {
  const metricsPort = await freePort();
  const apiPort = await apiOnEveryInterface({ AMY_METRICS_PORT: String(metricsPort) });
  expect(await acceptsConnection(OTHER_LOOPBACK, apiPort)).toBe(true);
  expect(await acceptsConnection('127.0.0.1', metricsPort)).toBe(true);
  expect(await acceptsConnection(OTHER_LOOPBACK, metricsPort)).toBe(false);
});

test("the worker's metrics are on loopback only, whatever HOST says", async () => {
  const metricsPort = await freePort();
  workers.push(
    await spawnWorkerProcess(svc.config, { env: { HOST: '0.0.0.0', AMY_METRICS_PORT: String(metricsPort) } }),
  );
  expect(await acceptsConnection('127.0.0.1', metricsPort)).toBe(true);
  expect(await acceptsConnection(OTHER_LOOPBACK, metricsPort)).toBe(false);
});

test('with HOST=0.0.0.0 the codec server answers on its own listener, on loopback only; the public port has none', async () => {
  const codecPort = await freePort();
  const apiPort = await apiOnEveryInterface({
    AMY_CODEC_OPERATORS: `ops:${'t'.repeat(32)}`,
    AMY_CODEC_PORT: String(codecPort),
  });
  expect(await acceptsConnection('127.0.0.1', codecPort)).toBe(true);
  expect(await acceptsConnection(OTHER_LOOPBACK, codecPort)).toBe(false);
  expect((await fetch(`http://127.0.0.1:${codecPort}/codec/login`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${apiPort}/codec/login`)).status).toBe(404);
});

test('AMY_METRICS_HOST=0.0.0.0 exposes the metrics: an operator’s explicit choice', async () => {
  const metricsPort = await freePort();
  await apiOnEveryInterface({ AMY_METRICS_PORT: String(metricsPort), AMY_METRICS_HOST: '0.0.0.0' });
  expect(await acceptsConnection(OTHER_LOOPBACK, metricsPort)).toBe(true);
});
