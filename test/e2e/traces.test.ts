/**
 * OpenTelemetry traces (docs/operations.md#traces) on the whole service: the compiled API and worker,
 * each in its own process, exporting OTLP/HTTP to a collector stand-in (../support/otlp-receiver.ts) as
 * they would to a real one. One turn is one connected trace, from the API request through the workflow
 * start, the workflow, its activities, every model call and the sandbox run, across both processes, with
 * the turn id on every span and the GenAI conventions on the model calls' spans; and none of the user's
 * words, the answer or memory reach a span unless AMY_OTEL_CAPTURE_CONTENT says so.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SpanKind } from '@opentelemetry/api';
import { MODEL_CALL_IDS } from '../../contracts/steps';
import { api } from '../support/http';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startDemoService, type DemoService } from '../support/service';

jest.setTimeout(300_000);

let receiver: OtlpReceiver;
let demo: DemoService;

const REMEMBERED = "I'm vegetarian and I only work out in the mornings.";
const QUESTION = 'What is my average resting heart rate over the last 90 days?';

/** The roles export to the receiver, in batches sent every 100 ms (the SDK's default is 5 s). */
async function startTracedService(extra: Record<string, string> = {}): Promise<DemoService> {
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', ...extra };
  const service = await startDemoService({ env: env as Record<string, string> });
  const res = await api(service.svc.url, 'POST', '/v1/memory', {
    key: service.user.apiKey,
    body: { category: 'preference', text: REMEMBERED },
  });
  expect(res.status).toBe(201);
  // That request's span is exported within a batch: waited for, so that it falls before the turns' traces.
  const deadline = Date.now() + 30_000;
  while (!receiver.spans().some((s) => s.name === 'POST /v1/memory')) {
    if (Date.now() > deadline) throw new Error('the memory request’s span never arrived');
    await sleep(50);
  }
  return service;
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  demo = await startTracedService();
});
afterAll(async () => {
  await demo?.close();
  await receiver?.close();
});

const ROOT = 'POST /v1/turns';
const RUN_WORKFLOW = 'RunWorkflow:TurnWorkflow';

/**
 * Asks `content` as a blocking turn and returns the turn and the spans exported meanwhile, once the
 * request's span (ended as the response goes) and the workflow's (ended with its run) are among them.
 */
async function tracedTurn(content: string) {
  receiver.reset();
  const res = await api(demo.svc.url, 'POST', '/v1/turns', {
    key: demo.user.apiKey,
    body: { messages: [{ role: 'user', content }], stream: false },
  });
  expect(res.status).toBe(200);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const spans = withoutRetention(receiver.spans());
    const names = spans.map((s) => s.name);
    if (names.includes(ROOT) && names.includes(RUN_WORKFLOW)) return { turn: res.body, spans };
    if (Date.now() > deadline) throw new Error(`the turn's trace never completed; spans: ${names.join(', ')}`);
    await sleep(50);
  }
}

/**
 * The worker also runs the retention schedule's workflow every 15 minutes, traced on its own: a run that
 * happens to fall within a turn is not part of the turn's trace, and is left out.
 */
function withoutRetention(spans: ReceivedSpan[]): ReceivedSpan[] {
  const retention = new Set(spans.filter((s) => s.name.includes('RetentionWorkflow')).map((s) => s.traceId));
  return spans.filter((s) => !retention.has(s.traceId));
}

const spanId = (span: ReceivedSpan) => span.spanId;

/** The names from `span` up to the root, following parent links. */
function ancestry(span: ReceivedSpan, spans: ReceivedSpan[]): string[] {
  const byId = new Map(spans.map((s) => [spanId(s), s]));
  const names: string[] = [];
  for (let at: ReceivedSpan | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) {
    names.push(at.name);
  }
  return names;
}

/** Every text a span would send: its name, its attributes, its events and its status. */
function textOf(span: ReceivedSpan): string {
  return JSON.stringify([span.name, span.attributes, span.events, span.status]);
}

describe('a turn about the user’s own data, content capture off (the default)', () => {
  let turn: { id: string; status: string; result: { answer: string } };
  let spans: ReceivedSpan[];
  beforeAll(async () => {
    ({ turn, spans } = await tracedTurn(QUESTION));
  });

  test('is one trace: the API request is its only root, and every other span’s parent is in it', () => {
    expect(turn.status).toBe('completed');
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    // Both processes' spans: the trace crosses from the API to the worker with the workflow start.
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['amy-api', 'amy-worker']));
    const ids = new Set(spans.map(spanId));
    const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
    expect(roots.map((s) => s.name)).toEqual([ROOT]);
    expect(roots[0]!.parentSpanId).toBeUndefined();
    expect(roots[0]!.kind).toBe(SpanKind.SERVER);
    expect(roots[0]!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/turns',
      'http.response.status_code': 200,
    });
  });

  test('the request starts the workflow, whose activities make the model calls and run the sandbox', () => {
    const workflowStart = ['StartWorkflow:TurnWorkflow', ROOT];
    const sandbox = spans.filter((s) => s.name === 'sandbox run');
    expect(sandbox).toHaveLength(1);
    expect(ancestry(sandbox[0]!, spans)).toEqual([
      'sandbox run',
      expect.stringMatching(/^RunActivity:/),
      expect.stringMatching(/^StartActivity:/),
      RUN_WORKFLOW,
      ...workflowStart,
    ]);
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats.length).toBeGreaterThan(1);
    for (const chat of chats) {
      const [, runActivity, startActivity, ...rest] = ancestry(chat, spans);
      expect(runActivity).toMatch(/^RunActivity:/);
      expect(startActivity).toBe(runActivity!.replace('RunActivity:', 'StartActivity:'));
      expect(rest).toEqual([RUN_WORKFLOW, ...workflowStart]);
    }
    expect(spans.some((s) => s.name.startsWith('gates '))).toBe(true);
  });

  test('every span carries the turn id', () => {
    for (const span of spans) expect([span.name, span.attributes['amy.turn_id']]).toEqual([span.name, turn.id]);
  });

  test('each model call is a GenAI chat span, one per call in the cost ledger, with its model, tokens, step and cost', async () => {
    const { rows } = await demo.pool.query<{ step: string; model: string; input_tokens: number; cost_usd: string }>(
      'SELECT step, model, input_tokens, cost_usd FROM llm_calls WHERE turn_id = $1',
      [turn.id],
    );
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    const calls = chats.map((s) => ({
      step: s.attributes['amy.step'],
      model: s.attributes['gen_ai.request.model'],
      input_tokens: s.attributes['gen_ai.usage.input_tokens'],
      cost_usd: s.attributes['amy.cost_usd'],
    }));
    const sorted = <T extends { step: unknown }>(list: T[]) =>
      [...list].sort((a, b) => String(a.step).localeCompare(String(b.step)));
    expect(sorted(calls)).toEqual(sorted(rows.map((r) => ({ ...r, cost_usd: Number(r.cost_usd) }))));
    for (const chat of chats) {
      const model = chat.attributes['gen_ai.request.model'];
      expect(model).toMatch(/^claude-/);
      expect(chat.name).toBe(`chat ${model}`);
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.system': 'anthropic',
        'gen_ai.response.model': expect.any(String),
        'gen_ai.request.max_tokens': expect.any(Number),
      });
      expect(MODEL_CALL_IDS).toContain(chat.attributes['amy.step']);
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['amy.cost_usd']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(chat.attributes['gen_ai.output.messages']).toBeUndefined();
    }
  });

  test('no span holds the question, the answer or anything in memory', async () => {
    const memory = await api(demo.svc.url, 'GET', '/v1/memory?include=tested_hypothesis&limit=100', {
      key: demo.user.apiKey,
    });
    const remembered: string[] = memory.body.data.map((entry: { text: string }) => entry.text);
    expect(remembered).toContain(REMEMBERED);
    expect(remembered.length).toBeGreaterThan(1);
    // The answer's sentences one by one, so that a part of it is caught as well as the whole.
    const sentences = turn.result.answer.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.trim().length >= 12);
    expect(sentences.length).toBeGreaterThan(0);
    const texts = spans.map(textOf);
    for (const secret of [QUESTION, ...remembered, ...sentences]) {
      expect(texts.filter((text) => text.includes(secret.trim()))).toEqual([]);
    }
  });
});

describe('content capture on (AMY_OTEL_CAPTURE_CONTENT=true)', () => {
  beforeAll(async () => {
    await demo.close();
    demo = await startTracedService({ AMY_OTEL_CAPTURE_CONTENT: 'true' });
  });

  test('a model call’s span carries its messages and its answer, as the GenAI conventions spell them', async () => {
    const { turn, spans } = await tracedTurn(QUESTION);
    expect(turn.status).toBe('completed');
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats.length).toBeGreaterThan(1);
    const inputs = chats.map((s) => JSON.parse(String(s.attributes['gen_ai.input.messages'])));
    expect(inputs[0]).toEqual([{ role: 'user', parts: [expect.objectContaining({ type: 'text' })] }]);
    expect(JSON.stringify(inputs)).toContain(QUESTION);
    const outputs = chats.map((s) => JSON.parse(String(s.attributes['gen_ai.output.messages'])));
    expect(outputs[0]).toEqual([
      { role: 'assistant', parts: [expect.objectContaining({ type: 'text' })], finish_reason: expect.any(String) },
    ]);
    const synthesis = chats.find((s) => s.attributes['amy.step'] === 'synthesis');
    expect(synthesis?.attributes['gen_ai.output.messages']).toContain(turn.result.answer.slice(0, 40));
  });
});
