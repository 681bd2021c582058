/**
 * Tracing's set-up from the environment (off unless asked for), and what leaves the process: an error's
 * class but never its message, plain attributes only, the turn id on every span of a turn, the
 * workflow's spans with its ids alone, and model calls' spans with the GenAI conventions and no content
 * unless AMY_OTEL_CAPTURE_CONTENT=true. The real OpenTelemetry SDK, exporting to memory.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';
import type Anthropic from '@anthropic-ai/sdk';
import { ConfigError } from '../../platform/config';
import { UpstreamUnavailableError } from '../../platform/llm/errors';
import type { Llm, LlmResponse } from '../../platform/llm';
import { traceModelCalls } from '../../platform/llm/tracing';
import { inSpan, tagTurn, tracingEnabled } from '../../platform/spans';
import { workflowTracingSinks } from '../../platform/temporal/tracing';
import { readTracingConfig, startTracing, type Tracing } from '../../platform/tracing';

const TURN_ID = 'turn_01JAAAAAAAAAAAAAAAAAAAAAAA';
const SECRET = 'my resting heart rate is 48';

describe('readTracingConfig', () => {
  const read = (env: NodeJS.ProcessEnv) => readTracingConfig(env, 'amy-api');

  test('off by default: no exporter, no content', () => {
    expect(read({})).toEqual({ exporters: [], serviceName: 'amy-api', captureContent: false });
  });

  test('an OTLP endpoint, for traces or for every signal, turns OTLP export on', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).exporters).toEqual(['otlp']);
    expect(read({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).exporters).toEqual(['otlp']);
  });

  test('OTEL_TRACES_EXPORTER names the exporters; none, or OTEL_SDK_DISABLED, turns them off whatever else is set', () => {
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' }).exporters).toEqual(['otlp']);
    expect(read({ OTEL_TRACES_EXPORTER: 'console,otlp' }).exporters).toEqual(['console', 'otlp']);
    expect(read({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).exporters).toEqual([]);
    expect(read({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).exporters).toEqual([]);
  });

  test('the service is named by OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, then the role', () => {
    expect(read({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=amy%20eu' }).serviceName).toBe(
      'amy eu',
    );
    expect(read({ OTEL_SERVICE_NAME: 'amy-api-eu', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }).serviceName).toBe(
      'amy-api-eu',
    );
  });

  test('content capture is on only when AMY_OTEL_CAPTURE_CONTENT is true', () => {
    expect(read({ AMY_OTEL_CAPTURE_CONTENT: 'true' }).captureContent).toBe(true);
    expect(read({ AMY_OTEL_CAPTURE_CONTENT: 'false' }).captureContent).toBe(false);
    expect(read({ AMY_OTEL_CAPTURE_CONTENT: '' }).captureContent).toBe(false);
  });

  test('what the service cannot do is refused at start-up', () => {
    expect(() => read({ AMY_OTEL_CAPTURE_CONTENT: 'yes' })).toThrow(ConfigError);
    expect(() => read({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/zipkin is not one of otlp, console, none/);
    expect(() => read({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317' })).toThrow(
      /grpc is not supported/,
    );
  });
});

test('off, nothing is registered: the API’s tracer records nothing and the helpers only call through', async () => {
  const tracing = startTracing({ defaultServiceName: 'amy-api', env: {} });
  expect(tracing.enabled).toBe(false);
  expect(tracingEnabled()).toBe(false);
  expect(trace.getTracer('any').startSpan('x').isRecording()).toBe(false);
  await expect(inSpan('y', {}, async (span) => span.isRecording())).resolves.toBe(false);
  await tracing.shutdown();
});

test('with an OTLP endpoint, spans go there over HTTP, named for the service, and what is batched is sent at shutdown', async () => {
  const received: Array<{ url?: string; type?: string; body: string }> = [];
  const collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ url: req.url, type: req.headers['content-type'], body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const saved = { ...process.env };
  // The OTLP exporter reads its endpoint from the process's environment, as it does in production.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  try {
    const tracing = startTracing({ defaultServiceName: 'amy-worker' });
    expect(tracing).toMatchObject({ enabled: true, serviceName: 'amy-worker' });
    await inSpan('chat claude-sonnet-4-6', {}, async () => {});
    await tracing.shutdown();
  } finally {
    process.env = saved;
    await new Promise((resolve) => collector.close(resolve));
  }
  expect(received).toHaveLength(1);
  expect(received[0]).toMatchObject({ url: '/v1/traces', type: 'application/json' });
  const body = JSON.parse(received[0]!.body);
  expect(body.resourceSpans[0].resource.attributes).toContainEqual({
    key: 'service.name',
    value: { stringValue: 'amy-worker' },
  });
  expect(body.resourceSpans[0].scopeSpans[0].spans.map((s: { name: string }) => s.name)).toEqual([
    'chat claude-sonnet-4-6',
  ]);
});

describe('on', () => {
  let exporter: InMemorySpanExporter;
  let tracing: Tracing;
  const start = (env: NodeJS.ProcessEnv = {}) => {
    exporter = new InMemorySpanExporter();
    tracing = startTracing({ defaultServiceName: 'amy-worker', env, exporter });
  };
  afterEach(() => tracing.shutdown());
  const spans = () => exporter.getFinishedSpans();
  const only = (name: string): ReadableSpan => {
    const found = spans().filter((s) => s.name === name);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  test('a failure leaves its class and no message, whoever made the span', async () => {
    start();
    // As Temporal's interceptors do it: the message as the status's, the error recorded whole.
    trace.getTracer('library').startActiveSpan('RunActivity:x', (span) => {
      span.setAttribute('temporalWorkflowId', TURN_ID);
      span.setStatus({ code: SpanStatusCode.ERROR, message: SECRET });
      span.recordException(new TypeError(SECRET));
      span.end();
    });
    await expect(
      inSpan('ours', {}, async () => {
        throw new UpstreamUnavailableError(SECRET);
      }),
    ).rejects.toThrow(SECRET);
    const library = only('RunActivity:x');
    expect(library.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(library.attributes['error.type']).toBe('TypeError');
    expect(library.events.map((e) => e.attributes)).toEqual([{ 'exception.type': 'TypeError' }]);
    expect(only('ours').status).toEqual({ code: SpanStatusCode.ERROR });
    expect(only('ours').attributes['error.type']).toBe('UpstreamUnavailableError');
    // Events without their time: a timestamp's digits may hold the secret's by chance.
    const recorded = spans().map((s) => [s.attributes, s.events.map((e) => [e.name, e.attributes]), s.status]);
    expect(JSON.stringify(recorded)).not.toContain('48');
  });

  test('the turn id: from a span about the turn’s workflow, to the spans started under it', async () => {
    start();
    await inSpan('POST /v1/turns', {}, async () => {
      tagTurn(TURN_ID);
      await inSpan('StartWorkflow:TurnWorkflow', {}, async () => {});
    });
    await trace.getTracer('library').startActiveSpan('RunActivity:route', async (span) => {
      span.setAttribute('temporalWorkflowId', TURN_ID);
      await inSpan('chat m', {}, async () => {});
      span.end();
    });
    await inSpan('elsewhere', {}, async () => {});
    for (const name of ['POST /v1/turns', 'StartWorkflow:TurnWorkflow', 'RunActivity:route', 'chat m']) {
      expect([name, only(name).attributes['amy.turn_id']]).toEqual([name, TURN_ID]);
    }
    expect(only('elsewhere').attributes['amy.turn_id']).toBeUndefined();
  });

  test('the workflow’s spans, handed over by its sink, carry its ids and the turn id, and plain values only', async () => {
    start();
    const info = {
      workflowId: TURN_ID,
      runId: 'run-1',
      workflowType: 'TurnWorkflow',
      memo: { note: SECRET },
      lastResult: SECRET,
      searchAttributes: {},
      historyLength: 12,
    } as unknown as WorkflowInfo;
    const serialized: SerializableSpan = {
      name: 'RunWorkflow:TurnWorkflow',
      kind: 0,
      spanContext: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 },
      startTime: [1, 0],
      endTime: [2, 0],
      status: { code: SpanStatusCode.OK },
      // Whatever the sandbox sent: an object is no attribute value, and may hold anything.
      attributes: { 'workflow.note': { text: SECRET } as unknown as string, 'workflow.step': 'route' },
      links: [],
      events: [],
      duration: [1, 0],
      ended: true,
      droppedAttributesCount: 0,
      droppedLinksCount: 0,
      droppedEventsCount: 0,
      instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
    };
    await workflowTracingSinks().exporter.export.fn(info, [serialized]);
    expect(only('RunWorkflow:TurnWorkflow').attributes).toEqual({
      'workflow.step': 'route',
      temporalWorkflowId: TURN_ID,
      run_id: 'run-1',
      'amy.turn_id': TURN_ID,
    });
  });

  describe('a model call', () => {
    const message = {
      id: 'msg_1',
      model: 'claude-sonnet-4-6',
      role: 'assistant',
      content: [{ type: 'text', text: `You said: ${SECRET}` }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 120, output_tokens: 30 },
    } as unknown as Anthropic.Message;
    const answering: Llm = {
      complete: async (): Promise<LlmResponse> => ({ text: '', message, costUsd: 0.0012, requestId: 'req_1' }),
      stream: async () => {
        throw new UpstreamUnavailableError(`overloaded while answering ${SECRET}`, { requestId: 'req_2', status: 529 });
      },
    };
    const llm = traceModelCalls({ ANTHROPIC_DEFAULT_SONNET_MODEL: 'claude-sonnet-4-6' }, answering);
    const ctx = { turnId: TURN_ID, step: 'route' as const, inputs: {}, attempt: 2 };
    const req = {
      model: 'sonnet',
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: SECRET }],
      maxTokens: 300,
    };

    test('is a GenAI chat span with the resolved model, the usage, the step and the cost, and no content', async () => {
      start();
      await llm.complete(ctx, req);
      expect(only('chat claude-sonnet-4-6').attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.system': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-6',
        'gen_ai.request.max_tokens': 300,
        'gen_ai.response.model': 'claude-sonnet-4-6',
        'gen_ai.response.id': 'msg_1',
        'gen_ai.response.finish_reasons': ['end_turn'],
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
        'amy.turn_id': TURN_ID,
        'amy.step': 'route',
        'amy.attempt': 2,
        'amy.cost_usd': 0.0012,
        'amy.anthropic.request_id': 'req_1',
      });
    });

    test('failed: its error class and request id, not its message', async () => {
      start();
      await expect(llm.stream(ctx, req, async () => {})).rejects.toThrow(UpstreamUnavailableError);
      const span = only('chat claude-sonnet-4-6');
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
      expect(span.attributes).toMatchObject({
        'error.type': 'UpstreamUnavailableError',
        'amy.anthropic.request_id': 'req_2',
      });
      expect(JSON.stringify([span.attributes, span.events])).not.toContain(SECRET);
    });

    test('with AMY_OTEL_CAPTURE_CONTENT=true: the system instructions, the messages and the answer', async () => {
      start({ AMY_OTEL_CAPTURE_CONTENT: 'true' });
      await llm.complete(ctx, req);
      const { attributes } = only('chat claude-sonnet-4-6');
      expect(JSON.parse(String(attributes['gen_ai.system_instructions']))).toEqual([
        { type: 'text', content: 'Be brief.' },
      ]);
      expect(JSON.parse(String(attributes['gen_ai.input.messages']))).toEqual([
        { role: 'user', parts: [{ type: 'text', content: SECRET }] },
      ]);
      expect(JSON.parse(String(attributes['gen_ai.output.messages']))).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: `You said: ${SECRET}` }], finish_reason: 'stop' },
      ]);
    });
  });
});
