/**
 * Who decides whether a turn is traced, on the whole service (docs/operations.md#traces): the compiled API and
 * worker export OTLP/HTTP to a collector stand-in under a sampler that records nothing of its own
 * (`parentbased_always_off`), and a client sends a W3C `traceparent` whose sampled flag is set. By default the
 * flag does not count: nothing is recorded. An API with AMY_OTEL_TRUST_TRACEPARENT=true obeys it, and the turn's
 * whole trace, the worker's spans too, goes on under the client's span.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../dev/stack/ports';
import { spawnApiProcess, type ApiProcess } from '../support/api-process';
import { api, thanks } from '../support/http';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startTestService, type TestService } from '../support/service';

jest.setTimeout(300_000);

const CLIENT_SPAN = '00f067aa0ba902b7';
/** A client's own trace, sampled: `00-<trace id>-<its span>-01`. */
const sampledTraceparent = (traceId: string) => `00-${traceId}-${CLIENT_SPAN}-01`;

let receiver: OtlpReceiver;
let svc: TestService;
let trustingApi: ApiProcess;
let apiKey: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // Batches sent every 100 ms (the SDK's default is 5 s).
  const tracing: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_TRACES_SAMPLER: 'parentbased_always_off',
  };
  svc = await startTestService({ env: tracing });
  // A second API beside the first, on the same database and worker, that trusts its callers' traceparent.
  trustingApi = await spawnApiProcess(svc.config, await freePort(), {
    env: { ...tracing, AMY_OTEL_TRUST_TRACEPARENT: 'true' },
  });
  ({ apiKey } = await svc.createUser());
});

afterAll(async () => {
  await trustingApi?.stop();
  await svc?.close();
  await receiver?.close();
});

/** A blocking turn through the API at `baseUrl`, sent with `traceparent`; resolved once it has completed. */
async function turnWithTraceparent(baseUrl: string, traceparent: string): Promise<{ id: string }> {
  const res = await api(baseUrl, 'POST', '/v1/turns', {
    key: apiKey,
    body: { ...thanks, stream: false },
    headers: { traceparent },
  });
  expect([res.status, res.body.status]).toEqual([200, 'completed']);
  return res.body;
}

const names = (spans: ReceivedSpan[]) => spans.map((s) => s.name);

test('by default, a client’s sampled traceparent does not have its turn recorded', async () => {
  receiver.reset();
  await turnWithTraceparent(svc.url, sampledTraceparent('4bf92f3577b34da6a3ce929d0e0e4736'));
  // Twenty batch delays: a span of the turn would have been sent by now (the next test sees them arrive).
  await sleep(2_000);
  expect(names(receiver.spans())).toEqual([]);
});

test('with AMY_OTEL_TRUST_TRACEPARENT=true it does: the whole turn, API and worker, under the client’s span', async () => {
  receiver.reset();
  const clientTrace = '0af7651916cd43dd8448eb211c80319c';
  const turn = await turnWithTraceparent(trustingApi.url, sampledTraceparent(clientTrace));
  const deadline = Date.now() + 30_000;
  while (!['POST /v1/turns', 'RunWorkflow:TurnWorkflow'].every((name) => names(receiver.spans()).includes(name))) {
    if (Date.now() > deadline) throw new Error(`the turn's trace never arrived; spans: ${names(receiver.spans())}`);
    await sleep(50);
  }
  const spans = receiver.spans().filter((s) => s.attributes['amy.turn_id'] === turn.id);
  expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([clientTrace]));
  expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['amy-api', 'amy-worker']));
  const request = spans.find((s) => s.name === 'POST /v1/turns');
  expect(request?.parentSpanId).toBe(CLIENT_SPAN);
});
