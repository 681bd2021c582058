/**
 * Who decides whether an API request is traced (api/request-tracing.ts, docs/operations.md#traces): the service's
 * sampler, unless AMY_OTEL_TRUST_TRACEPARENT lets a caller's W3C `traceparent` decide. The real OpenTelemetry SDK
 * with the sampler OTEL_TRACES_SAMPLER names, a real HTTP server, spans exported to memory.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { traceRequests, type RequestTracingOptions } from '../../api/request-tracing';
import { ConfigError, loadConfig } from '../../platform/config';
import { startTracing } from '../../platform/tracing';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const sampled = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const notSampled = `00-${CALLER_TRACE}-${CALLER_SPAN}-00`;

const DEFAULT: RequestTracingOptions = { trustTraceparent: false };
const TRUSTED: RequestTracingOptions = { trustTraceparent: true };

/**
 * The spans of one `GET /v1/turns` sent with `traceparent`, through an API whose sampler is `sampler` (the SDK
 * reads OTEL_TRACES_SAMPLER from the process's environment, as it does in production).
 */
async function spansOfRequest(
  options: RequestTracingOptions,
  sampler: { OTEL_TRACES_SAMPLER: string; OTEL_TRACES_SAMPLER_ARG?: string },
  traceparent: string,
): Promise<ReadableSpan[]> {
  const saved = { ...process.env };
  Object.assign(process.env, sampler);
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({ defaultServiceName: 'amy-api', env: {}, exporter });
  process.env = saved;
  const server = http.createServer(traceRequests((_req, res) => res.end('{}'), options));
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/turns`, {
      headers: { traceparent },
    });
    expect(res.status).toBe(200);
    await res.text();
    // The span ends on the response's 'close', just after the client has read it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return exporter.getFinishedSpans();
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await tracing.shutdown();
  }
}

const NEVER = { OTEL_TRACES_SAMPLER: 'parentbased_always_off' };
const ALWAYS = { OTEL_TRACES_SAMPLER: 'parentbased_always_on' };

describe('by default, a caller’s traceparent does not decide', () => {
  test('a sampled traceparent is not recorded when the service’s sampler would not record the request', async () => {
    expect(await spansOfRequest(DEFAULT, NEVER, sampled)).toEqual([]);
  });

  test('nor when it names a trace id that the ratio sampler keeps: the request’s trace id is the service’s own', async () => {
    // TraceIdRatioBasedSampler keeps a trace whose id's 32-bit words XOR to less than ratio × 2³²: 1 < 4 here.
    const chosenId = `00-${'0'.repeat(31)}1-${CALLER_SPAN}-01`;
    const oneInABillion = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.000000001' };
    expect(await spansOfRequest(DEFAULT, oneInABillion, chosenId)).toEqual([]);
  });

  test('an unsampled traceparent is recorded when the service’s sampler records the request, in a trace of its own linked to the caller’s span', async () => {
    const [span, ...others] = await spansOfRequest(DEFAULT, ALWAYS, notSampled);
    expect(others).toEqual([]);
    expect(span!.name).toBe('GET');
    expect(span!.parentSpanId).toBeUndefined();
    expect(span!.spanContext().traceId).not.toBe(CALLER_TRACE);
    expect(span!.links.map((link) => [link.context.traceId, link.context.spanId])).toEqual([
      [CALLER_TRACE, CALLER_SPAN],
    ]);
  });

  test('a request without a traceparent starts a trace with no link', async () => {
    const [span] = await spansOfRequest(DEFAULT, ALWAYS, 'not a traceparent');
    expect(span!.parentSpanId).toBeUndefined();
    expect(span!.links).toEqual([]);
  });
});

describe('with AMY_OTEL_TRUST_TRACEPARENT=true, the caller’s trace goes on and its sampled flag decides', () => {
  test('a sampled traceparent is recorded, under the caller’s span, even when the service’s sampler would not', async () => {
    const [span, ...others] = await spansOfRequest(TRUSTED, NEVER, sampled);
    expect(others).toEqual([]);
    expect(span!.spanContext().traceId).toBe(CALLER_TRACE);
    expect(span!.parentSpanId).toBe(CALLER_SPAN);
    expect(span!.links).toEqual([]);
  });

  test('an unsampled traceparent is not recorded, even when the service’s sampler would', async () => {
    expect(await spansOfRequest(TRUSTED, ALWAYS, notSampled)).toEqual([]);
  });
});

test('AMY_OTEL_TRUST_TRACEPARENT is off unless set to true, and refused when it is anything else', () => {
  const trust = (value?: string) =>
    loadConfig({ DATABASE_URL: 'postgres://localhost/amy', AMY_OTEL_TRUST_TRACEPARENT: value })
      .AMY_OTEL_TRUST_TRACEPARENT;
  expect([trust(), trust(''), trust('false'), trust('true')]).toEqual([false, false, false, true]);
  expect(() => trust('yes')).toThrow(ConfigError);
});
